#!/usr/bin/env bash
# session 31, call 1: where ChEMBL's --gradient call spends its time beside the plain call (HEAD's kernels: 72c04b4 bundle)
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
# HEAD bundle (72c04b4): its embedded kernels are the landed ones

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# the in-memory cost of the gradient (Python, warm calls, no files written): oct_grad.py as gradient.sh runs it
mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
CALLS=5 PYTHONPATH=/tmp/py timeout 300 python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag ba --no-fd 2>&1 | grep -v -i warn | tail -20
for r in 1 2; do for g in "" --gradient; do
  OCTILE_TRACE=1 $B/octile gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/k.npy --quiet $g > $O/trace_chembl$g.$r.log 2>&1
  python3 -c "import json; s=json.load(open('/tmp/k.json')); t=s.get('timeline',{}); print('chembl$g', '$r', s['seconds'], [x[5:9] for x in t.get('tiles',[])][:8])"
done; done
for g in "" --gradient; do for r in 1 2; do OCTILE_TRACE=1 $B/octile gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/k.npy --quiet $g > $O/trace_mutag$g.$r.log 2>&1; python3 -c "import json; s=json.load(open('/tmp/k.json')); print('mutag$g', r'$r', s['seconds'])"; done; done
M=smsp__inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic
for g in "" --gradient; do
 timeout 200 ncu --metrics $M -k regex:mgk_ --csv $B/octile gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet $g > $O/ncu_chembl$g.csv 2>/dev/null; echo "ncu chembl$g rc=$?"
done
python3 - <<'PY'
import csv, collections, os
O=os.environ.get('OUT','/tmp/out')
for g in ['', '--gradient']:
    rows=list(csv.DictReader(l for l in open(f'{O}/ncu_chembl{g}.csv') if l.startswith('"')))
    per=collections.OrderedDict()
    for r in rows: per.setdefault((r['ID'],r['Kernel Name']),{})[r['Metric Name']]=r['Metric Value'].replace(',','')
    by=collections.defaultdict(lambda:[0,0.0,0.0])
    for (i,k),m in per.items():
        b=by[k.split('(')[0]]; b[0]+=1; b[1]+=float(m.get('gpu__time_duration.sum',0)); b[2]+=float(m.get('smsp__inst_executed.sum',0))
    print(f"chembl{g}: {len(per)} launches, {sum(b[1] for b in by.values())/1e6:.2f} ms")
    for k,b in by.items(): print(f"   {k:40s} {b[0]:3d} launches {b[1]/1e6:8.2f} ms {b[2]/1e9:8.2f} G warp inst")
    for (i,k),m in list(per.items())[:40]:
        print(f"   {i:>3} {k[:34]:34s} t {float(m.get('gpu__time_duration.sum',0))/1e3:8.1f} us inst {float(m.get('smsp__inst_executed.sum',0))/1e6:8.1f}M regs {m.get('launch__registers_per_thread')} blk {m.get('launch__block_size')} grid {m.get('launch__grid_size')} smem {m.get('launch__shared_mem_per_block_dynamic')} lim r/s {m.get('launch__occupancy_limit_registers')}/{m.get('launch__occupancy_limit_shared_mem')} warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active')} issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active')}")
PY
