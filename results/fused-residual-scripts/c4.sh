#!/usr/bin/env bash
# session 27, call 4: Nsight Compute of BA's resident launches, plain and --gradient, old vs new kernels (OCTILE_PTX_FILE)
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s27/new.tar.xz | tar -xf - -C $B; for v in old new; do xz -dc .carry/s27/$v.cubin.xz > $B/$v.cubin; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
M=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__shared_mem_per_block_dynamic,launch__grid_size,launch__block_size
for v in old new; do
  OCTILE_PTX_FILE=$B/$v.cubin timeout 150 ncu --metrics $M -k regex:mgk_resident --csv $B/octile-new gram $S/ba.jsonl --kernel $S/ba.toml --out /tmp/n.npy --quiet > $O/ncu_ba_$v.csv 2>/dev/null; echo "ncu ba $v rc=$?"
  OCTILE_PTX_FILE=$B/$v.cubin timeout 150 ncu --metrics $M -k regex:mgk_resident --csv $B/octile-new gram $S/ba.jsonl --kernel $S/ba.toml --out /tmp/n.npy --quiet --gradient > $O/ncu_bag_$v.csv 2>/dev/null; echo "ncu ba gradient $v rc=$?"
done
python3 - <<'PY'
import csv, collections, os
O=os.environ.get('OUT','/tmp/out')
for s in ['ba','bag']:
    for v in ['old','new']:
        p=f'{O}/ncu_{s}_{v}.csv'
        try: rows=list(csv.DictReader(l for l in open(p) if l.startswith('"')))
        except Exception as e: print(s,v,'no csv',e); continue
        per=collections.defaultdict(dict)
        for r in rows: per[(r['ID'],r['Kernel Name'])][r['Metric Name']]=r['Metric Value'].replace(',','')
        f=lambda k: sum(float(m.get(k,0) or 0) for m in per.values())
        t=f('gpu__time_duration.sum')
        print(f"{s} {v}: launches {len(per)} time {t/1e6:.3f} ms warp inst {f('smsp__inst_executed.sum')/1e6:.1f} M thread inst {f('smsp__thread_inst_executed.sum')/1e6:.1f} M lanes {f('smsp__thread_inst_executed.sum')/max(1,f('smsp__inst_executed.sum')):.2f}")
        for (i,k),m in list(per.items())[:12]:
            print(f"   {k[:40]:40s} t {float(m.get('gpu__time_duration.sum',0))/1e3:8.1f} us inst {float(m.get('smsp__inst_executed.sum',0))/1e6:7.1f} M lanes {float(m.get('smsp__thread_inst_executed.sum',0))/max(1,float(m.get('smsp__inst_executed.sum',1))):5.2f} regs {m.get('launch__registers_per_thread')} smem {m.get('launch__shared_mem_per_block_dynamic')} grid {m.get('launch__grid_size')}x{m.get('launch__block_size')} warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active')} issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active')}")
PY
