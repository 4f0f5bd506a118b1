#!/usr/bin/env bash
# session 29, call 4: base (HEAD 30d5921's binary) vs v3 (its kernels with the product entry loop two entries a step, ptxas unrolling off: .pragma nounroll) by OCTILE_PTX_FILE
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s29/octile-base.xz > $B/oct; chmod +x $B/oct
for v in v3; do xz -dc .carry/s29/$v.cubin.xz > $B/$v.cubin; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  if [ $v = base ]; then $B/oct gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  else OCTILE_PTX_FILE=$B/$v.cubin $B/oct gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"; fi
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_base$2.npy')
for v in ['v3']:
    a=np.load(f'/tmp/k_$1_{v}$2.npy'); print('$1$2', v, 'vs base: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
    g1, g2 = '/tmp/k_$1_base$2.grad.npy', f'/tmp/k_$1_{v}$2.grad.npy'
    if os.path.exists(g1):
        gb=np.load(g1); ga=np.load(g2); print('$1$2', v, 'gradient: bit-identical', int((ga==gb).sum()), 'of', ga.size)"; }
{
for r in 1 2 3 4 5 6 7 8 9 10 11; do for v in base v3; do run $v mutag ""; done; done
for r in 1 2 3; do for v in base v3; do run $v chembl ""; run $v nws ""; run $v ba ""; done; done
for r in 1 2; do for v in base v3; do run $v chembl _g --gradient; run $v mutag _g --gradient; run $v nws_smallq ""; run $v chembl _64 --precision f64; done; done
for x in "mutag x" "chembl x" "nws x" "ba x" "nws_smallq x" "chembl _g" "mutag _g" "chembl _64"; do set -- $x; [ "$2" = x ] && cmpv $1 "" || cmpv $1 $2; done
} > $O/c4.log 2>&1
grep -v -E "^(base|v3) " $O/c4.log
for s in mutag chembl nws ba nws_smallq chembl_g mutag_g chembl_64; do for v in base v3; do echo "median $v $s $(grep -E "^$v $s " $O/c4.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c4.log) runs)"; done; done
M=smsp__inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
for v in base v3; do
  if [ $v = base ]; then P=""; else P="OCTILE_PTX_FILE=$B/$v.cubin"; fi
  env $P timeout 100 ncu --metrics $M -k regex:mgk_resident --csv $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/n.npy --quiet > $O/ncu_mutag_$v.csv 2>/dev/null; echo "ncu mutag $v rc=$?"
  env $P timeout 120 ncu --metrics $M -k regex:mgk_resident --launch-count 24 --csv $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 > $O/ncu_chembl_$v.csv 2>/dev/null; echo "ncu chembl $v rc=$?"
done
python3 - <<'PY'
import csv, collections, os
O=os.environ.get('OUT','/tmp/out')
for s_, v in [(a, b) for a in ['mutag', 'chembl'] for b in ['base', 'v3']]:
    rows=list(csv.DictReader(l for l in open(f'{O}/ncu_{s_}_{v}.csv') if l.startswith('"')))
    per=collections.defaultdict(dict)
    for r in rows: per[(r['ID'],r['Kernel Name'])][r['Metric Name']]=r['Metric Value'].replace(',','')
    f=lambda key: sum(float(m.get(key,0) or 0) for m in per.values())
    print(f"{s_} {v}: {len(per)} launches, {f('gpu__time_duration.sum')/1e6:.3f} ms, {f('smsp__inst_executed.sum')/1e6:.1f} M warp inst")
    for (i,k),m in list(per.items())[:8]:
        print(f"  {v} {k[:28]:28s} t {float(m.get('gpu__time_duration.sum',0))/1e3:8.1f} us inst {float(m.get('smsp__inst_executed.sum',0))/1e6:7.1f}M regs {m.get('launch__registers_per_thread')} lim r/s {m.get('launch__occupancy_limit_registers')}/{m.get('launch__occupancy_limit_shared_mem')} warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active')} issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active')}")
PY
