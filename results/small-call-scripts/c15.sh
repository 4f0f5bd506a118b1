#!/usr/bin/env bash
# session 25, call 5: where ChEMBL's gradient call spends its time beyond the plain call: per-launch times (-v, launches
# synchronized) of both; Nsight Compute on the first launches of each (instructions, lanes, occupancy, local memory)
set -u
B=/tmp/b; mkdir -p $B; S=.peers/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/octile-s25e.xz > $B/oct; chmod +x $B/oct
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for r in 1 2 3; do
  for g in "" --gradient; do $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/c.npy --quiet --tiles-in-flight 1 $g; python3 -c "import json; s=json.load(open('/tmp/c.json')); print('chembl ${g:-plain} tiles-in-flight 1: %.4f s' % s['seconds'])"; done
done
for g in "" --gradient; do
  echo "== -v chembl ${g:-plain} (tiles in flight 1)"
  $B/oct -v gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/c.npy --quiet --tiles-in-flight 1 $g 2>&1 | grep -E "resident: launch" > /tmp/v_${g:-plain}.log
  python3 - /tmp/v_${g:-plain}.log <<'PY'
import re,sys,collections
tot=collections.defaultdict(lambda:[0,0.0]); all_=0.0
for l in open(sys.argv[1]):
    m=re.search(r"launch (.*?), slice (\d+) words, (\d+) pairs, grid (\d+): ([0-9.]+) ms",l)
    if not m: continue
    k=m.group(1)+" slice "+m.group(2); tot[k][0]+=int(m.group(3)); tot[k][1]+=float(m.group(5)); all_+=float(m.group(5))
for k,(n,t) in sorted(tot.items(), key=lambda x:-x[1][1])[:14]: print(f"  {k}: {n} pairs {t:.2f} ms ({t/n*1e3:.2f} us/pair)")
print(f"  all launches (synchronized) {all_:.1f} ms")
PY
done
M=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__block_size,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
for g in "" --gradient; do
  timeout 150 ncu --kernel-name regex:mgk_resident --launch-skip 0 --launch-count 12 --metrics $M --csv $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 $g > $O/ncu_chembl_${g:-plain}.csv 2>/tmp/ncu_err.log || tail -3 /tmp/ncu_err.log
  python3 - $O/ncu_chembl_${g:-plain}.csv "${g:-plain}" <<'PY'
import csv,sys,collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
if not rows: print("ncu: no rows"); sys.exit()
h=rows[0]; rows=rows[1:]
iK,iN,iM,iV=h.index('Kernel Name'),h.index('ID'),h.index('Metric Name'),h.index('Metric Value')
per=collections.defaultdict(dict)
for r in rows:
    try: per[(int(r[iN]),r[iK])][r[iM]]=float(r[iV].replace(',',''))
    except: pass
for (i,k),m in sorted(per.items()):
    g=lambda n: m.get(n,0)
    print(f"ncu {sys.argv[2]} #{i} {k}: {g('gpu__time_duration.sum')/1e3:.1f} us grid {g('launch__grid_size'):.0f}x{g('launch__block_size'):.0f} inst {g('smsp__inst_executed.sum')/1e6:.2f} M lanes {g('smsp__thread_inst_executed.sum')/max(1,g('smsp__inst_executed.sum')):.1f} warps {g('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}% issue {g('smsp__issue_active.avg.pct_of_peak_sustained_active'):.1f}% regs {g('launch__registers_per_thread'):.0f} lim r/s {g('launch__occupancy_limit_registers'):.0f}/{g('launch__occupancy_limit_shared_mem'):.0f} local st/ld sectors {g('l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum'):.0f}/{g('l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum'):.0f} lds/sts {g('smsp__sass_inst_executed_op_shared_ld.sum')/1e6:.2f}/{g('smsp__sass_inst_executed_op_shared_st.sum')/1e6:.2f} M")
PY
done
