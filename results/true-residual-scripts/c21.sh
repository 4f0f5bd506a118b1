#!/usr/bin/env bash
# session 26, call 1: base (ab0ff6c) vs scaled (the f32 product form's entries point into [z | h·z]) — times alternating,
# values compared, Nsight Compute counters of the product launches (MUTAG, ChEMBL), the GPU tests of scaled, memcheck
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in base scaled; do xz -dc .carry/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  $B/octile-$v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"
  cp /tmp/k_${s}_$v$tag.json $O/sum_${s}_$v$tag.$RANDOM.json 2>/dev/null; }
cmp() { python3 -c "
import numpy as np, os; b=np.load('/tmp/k_$1_base$2.npy'); a=np.load('/tmp/k_$1_scaled$2.npy')
print('$1$2 scaled vs base: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
g1, g2 = '/tmp/k_$1_base$2.grad.npy', '/tmp/k_$1_scaled$2.grad.npy'
if os.path.exists(g1):
    b=np.load(g1); a=np.load(g2); print('$1$2 gradient: bit-identical', int((a==b).sum()), 'of', a.size, 'max diff / max|dK| %.2e' % float(abs(a-b).max()/abs(b).max()))"; }
{
for r in 1 2 3 4 5 6 7 8 9; do for v in base scaled; do run $v mutag ""; done; done; cmp mutag ""
for r in 1 2 3; do for v in base scaled; do for s in chembl nws ba; do run $v $s ""; done; done; done
for r in 1 2; do for v in base scaled; do run $v nws_smallq ""; run $v proteins ""; run $v chembl _g --gradient; run $v mutag _g --gradient; run $v mutag _64 --precision f64; run $v chembl _64 --precision f64; done; done
for s in chembl nws nws_smallq ba proteins; do cmp $s ""; done; cmp chembl _g; cmp mutag _g; cmp mutag _64; cmp chembl _64
} > $O/c21.log 2>&1
grep -v -E "^(base|scaled) " $O/c21.log
for s in mutag chembl nws nws_smallq ba proteins chembl_g mutag_g mutag_64 chembl_64; do for v in base scaled; do echo "median $v $s $(grep -E "^$v $s " $O/c21.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c21.log) runs, it $(grep -E "^$v $s " $O/c21.log | head -1 | awk '{print $5}'))"; done; done
for v in base scaled; do echo "== timeline mutag $v"; python3 scripts/timeline $O/sum_mutag_$v.*.json 2>&1 | tail -25; done
M=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__shared_mem_per_block_dynamic,launch__grid_size,launch__block_size,sm__sass_inst_executed_op_shared_ld.sum
for v in base scaled; do
  timeout 150 ncu --metrics $M -k regex:mgk_resident --csv $B/octile-$v gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/n.npy --quiet > $O/ncu_mutag_$v.csv 2>/dev/null; echo "ncu mutag $v rc=$?"
  timeout 200 ncu --metrics $M -k regex:mgk_resident --launch-count 24 --csv $B/octile-$v gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 > $O/ncu_chembl_$v.csv 2>/dev/null; echo "ncu chembl $v rc=$?"
done
python3 - <<'PY'
import csv, collections, os
O=os.environ.get('OUT','/tmp/out')
for s in ['mutag','chembl']:
    for v in ['base','scaled']:
        p=f'{O}/ncu_{s}_{v}.csv'
        try: rows=list(csv.DictReader(l for l in open(p) if l.startswith('"')))
        except Exception as e: print(s,v,'no csv',e); continue
        per=collections.defaultdict(dict)
        for r in rows: per[(r['ID'],r['Kernel Name'])][r['Metric Name']]=r['Metric Value'].replace(',','')
        f=lambda k: sum(float(m.get(k,0) or 0) for m in per.values())
        t=f('gpu__time_duration.sum')
        print(f"{s} {v}: launches {len(per)} time {t/1e6:.3f} ms warp inst {f('smsp__inst_executed.sum')/1e6:.1f} M thread inst {f('smsp__thread_inst_executed.sum')/1e6:.1f} M lanes {f('smsp__thread_inst_executed.sum')/max(1,f('smsp__inst_executed.sum')):.2f} LDS {f('sm__sass_inst_executed_op_shared_ld.sum')/1e6:.1f} M")
        for (i,k),m in list(per.items())[:8]:
            print(f"   {k[:34]:34s} t {float(m.get('gpu__time_duration.sum',0))/1e3:8.1f} us regs {m.get('launch__registers_per_thread')} smem {m.get('launch__shared_mem_per_block_dynamic')} grid {m.get('launch__grid_size')}x{m.get('launch__block_size')} warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active')} issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active')} lim smem/reg {m.get('launch__occupancy_limit_shared_mem')}/{m.get('launch__occupancy_limit_registers')}")
PY
xz -dc .carry/tests-s26.tar.xz | tar -xf - -C $B
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in $(ls $B/t); do
  timeout 150 $B/t/$t --test-threads=1 > /tmp/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' /tmp/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' /tmp/t_$t.log | head -5
done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/resident --test-threads=1 > /tmp/ms1.log 2>&1; echo "memcheck resident rc=$? $(grep -E 'ERROR SUMMARY|test result' /tmp/ms1.log | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/octile-scaled gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/ms.npy --quiet > /tmp/ms2.log 2>&1; echo "memcheck mutag gram rc=$? $(grep -E 'ERROR SUMMARY' /tmp/ms2.log)"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/t/resident --test-threads=1 > /tmp/ms3.log 2>&1; echo "racecheck resident rc=$? $(grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result" /tmp/ms3.log | tr "\n" " ")"
