#!/usr/bin/env bash
# session 32, call 7 (the warm machine's last ~220 s): Nsight Compute per launch of ChEMBL's plain and --gradient calls
# (HEAD's kernels: the split cubin): where the gradient's time goes, entry by entry
set -u
B=/tmp/b; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
export OCTILE_PTX_FILE=$B/base.cubin
M=smsp__inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic
for g in "" --gradient; do
 timeout 95 ncu --metrics $M -k regex:mgk_ --csv $B/octile gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet $g > $O/ncu_chembl$g.csv 2>/dev/null; echo "ncu chembl$g rc=$?"
done
python3 - <<'PY'
import csv, collections, os
O=os.environ.get('OUT','/tmp/out')
for g in ['', '--gradient']:
    try: rows=list(csv.DictReader(l for l in open(f'{O}/ncu_chembl{g}.csv') if l.startswith('"')))
    except Exception as e: print(g, e); continue
    per=collections.OrderedDict()
    for r in rows: per.setdefault((r['ID'],r['Kernel Name']),{})[r['Metric Name']]=r['Metric Value'].replace(',','')
    by=collections.defaultdict(lambda:[0,0.0,0.0])
    for (i,k),m in per.items():
        b=by[k.split('(')[0]]; b[0]+=1; b[1]+=float(m.get('gpu__time_duration.sum',0)); b[2]+=float(m.get('smsp__inst_executed.sum',0))
    print(f"chembl{g}: {len(per)} launches, {sum(b[1] for b in by.values())/1e6:.2f} ms")
    for k,b in by.items(): print(f"   {k:40s} {b[0]:3d} launches {b[1]/1e6:8.2f} ms {b[2]/1e9:8.3f} G warp inst")
    for (i,k),m in list(per.items()):
        print(f"   {i:>3} {k.split('(')[0][:34]:34s} t {float(m.get('gpu__time_duration.sum',0))/1e3:8.1f} us inst {float(m.get('smsp__inst_executed.sum',0))/1e6:8.1f}M regs {m.get('launch__registers_per_thread')} blk {m.get('launch__block_size')} grid {m.get('launch__grid_size')} smem {m.get('launch__shared_mem_per_block_dynamic')} lim r/s {m.get('launch__occupancy_limit_registers')}/{m.get('launch__occupancy_limit_shared_mem')} warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active')} issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active')}")
PY
