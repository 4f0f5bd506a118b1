#!/usr/bin/env bash
# session 30, call 6: w1 (the landed 63cdabe kernels) vs w2 (the f32 product solve's p, ap and dg in row records) by OCTILE_PTX_FILE in 17a8172's binary (same host code)
# values, medians, Nsight Compute on MUTAG / ChEMBL's first 24 launches, then the GPU tests of resident/gradient/reference/gpu_smoke and memcheck with w1
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B; cp $B/octile $B/oct
for v in w1 w2; do xz -dc .carry/s30/$v.cubin.xz > $B/$v.cubin; done
V="w1 w2"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  if false; then $B/oct gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  else OCTILE_PTX_FILE=$B/$v.cubin $B/oct gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"; fi
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_w1$2.npy')
for v in ['w2']:
    a=np.load(f'/tmp/k_$1_{v}$2.npy'); print('$1$2', v, 'vs w1: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
    g1, g2 = '/tmp/k_$1_w1$2.grad.npy', f'/tmp/k_$1_{v}$2.grad.npy'
    if os.path.exists(g1):
        gb=np.load(g1); ga=np.load(g2); print('$1$2', v, 'gradient: bit-identical', int((ga==gb).sum()), 'of', ga.size, 'max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"; }
{
for r in 1 2 3 4 5 6 7 8 9; do for v in $V; do run $v mutag ""; done; done
for r in 1 2 3 4 5; do for v in $V; do run $v chembl ""; run $v nws ""; run $v ba ""; run $v chembl _g --gradient; done; done
for r in 1 2; do for v in $V; do run $v mutag _g --gradient; run $v nws_smallq ""; run $v chembl _64 --precision f64; run $v nws _g --gradient; done; done
for x in "mutag x" "chembl x" "nws x" "ba x" "nws_smallq x" "chembl _g" "mutag _g" "nws _g" "chembl _64"; do set -- $x; [ "$2" = x ] && cmpv $1 "" || cmpv $1 $2; done
} > $O/c6.log 2>&1
grep -v -E "^(w1|w2) " $O/c6.log
for s in mutag chembl nws ba nws_smallq chembl_g mutag_g nws_g chembl_64; do for v in $V; do echo "median $v $s $(grep -E "^$v $s " $O/c6.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c6.log) runs)"; done; done
M=smsp__inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
for v in w1 w2; do
  P="OCTILE_PTX_FILE=$B/$v.cubin"
  env $P timeout 100 ncu --metrics $M -k regex:mgk_resident --csv $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/n.npy --quiet > $O/ncu_mutag_$v.csv 2>/dev/null; echo "ncu mutag $v rc=$?"
  env $P timeout 120 ncu --metrics $M -k regex:mgk_resident --launch-count 24 --csv $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 > $O/ncu_chembl_$v.csv 2>/dev/null; echo "ncu chembl $v rc=$?"
done
python3 - <<'PY'
import csv, collections, os
O=os.environ.get('OUT','/tmp/out')
for s_, v in [(a, b) for a in ['mutag', 'chembl'] for b in ['w1', 'w2']]:
    try: rows=list(csv.DictReader(l for l in open(f'{O}/ncu_{s_}_{v}.csv') if l.startswith('"')))
    except Exception as e: print(s_, v, e); continue
    per=collections.defaultdict(dict)
    for r in rows: per[(r['ID'],r['Kernel Name'])][r['Metric Name']]=r['Metric Value'].replace(',','')
    f=lambda key: sum(float(m.get(key,0) or 0) for m in per.values())
    print(f"{s_} {v}: {len(per)} launches, {f('gpu__time_duration.sum')/1e6:.3f} ms, {f('smsp__inst_executed.sum')/1e6:.1f} M warp inst")
    for (i,k),m in list(per.items())[:8]:
        print(f"  {v} {k[:28]:28s} t {float(m.get('gpu__time_duration.sum',0))/1e3:8.1f} us inst {float(m.get('smsp__inst_executed.sum',0))/1e6:7.1f}M regs {m.get('launch__registers_per_thread')} lim r/s {m.get('launch__occupancy_limit_registers')}/{m.get('launch__occupancy_limit_shared_mem')} warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active')} issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active')}")
PY
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo
for t in resident gradient gpu_smoke reference; do
  OCTILE_PTX_FILE=$B/w2.cubin timeout 150 $B/tests/$t --test-threads=2 > $O/t_w2_$t.log 2>&1; echo "test w2 $t rc=$? $(grep -E '^test result' $O/t_w2_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked' $O/t_w2_$t.log | head -5
done
for v in w2; do for g in "" --gradient; do
  OCTILE_PTX_FILE=$B/$v.cubin timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/ms.npy --quiet $g > $O/memcheck_$v$g.log 2>&1; echo "memcheck mutag $g ($v) rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck_$v$g.log)"
done; done
