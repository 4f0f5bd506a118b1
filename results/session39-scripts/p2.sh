#!/usr/bin/env bash
# session 39, call 2: where BA's gradient call spends its time beyond the plain call (issue 33 asks ≤ 1.6×), with the
# change's kernels: medians of both, per-launch times (-v, launches synchronized), Nsight Compute on every resident
# launch of each (instructions, lanes, warps, issue, registers, local memory, shared loads/stores). Carry as p1.sh.
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; B=/tmp/bb; S=/tmp/sets; mkdir -p $O $B $S
exec > >(tee $O/summary2.txt) 2>&1
xz -dc .carry/s39/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/sets.tar.xz | tar -xf - -C $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for SET in ${P2_SETS:-ba chembl}; do
for r in 1 2 3; do
  for g in "" --gradient; do $B/octile gram $S/$SET.jsonl --kernel $S/$SET.toml --out /tmp/c.npy --quiet --tiles-in-flight 1 $g; python3 -c "import json; s=json.load(open('/tmp/c.json')); print('$SET ${g:-plain} tiles-in-flight 1: %.4f s' % s['seconds'])"; done
done
for g in "" --gradient; do
  echo "== -v $SET ${g:-plain} (tiles in flight 1)"
  $B/octile -v gram $S/$SET.jsonl --kernel $S/$SET.toml --out /tmp/c.npy --quiet --tiles-in-flight 1 $g 2>&1 | grep -E "resident: launch" > /tmp/v_${g:-plain}.log
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
  timeout 150 ncu --kernel-name regex:mgk_resident --launch-skip 0 --launch-count ${P2_LAUNCHES:-40} --metrics $M --csv $B/octile gram $S/$SET.jsonl --kernel $S/$SET.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 $g > $O/ncu_${SET}_${g:-plain}.csv 2>/tmp/ncu_err.log || tail -3 /tmp/ncu_err.log
  python3 - $O/ncu_${SET}_${g:-plain}.csv "${g:-plain}" <<'PY'
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
T=lambda n: sum(m.get(n,0) for m in per.values())
W=lambda n: sum(m.get(n,0)*m.get('gpu__time_duration.sum',0) for m in per.values())/max(1,T('gpu__time_duration.sum'))
print(f"ncu {sys.argv[2]} total {len(per)} launches: {T('gpu__time_duration.sum')/1e6:.2f} ms inst {T('smsp__inst_executed.sum')/1e6:.1f} M lanes {T('smsp__thread_inst_executed.sum')/max(1,T('smsp__inst_executed.sum')):.1f} time-weighted warps {W('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}% issue {W('smsp__issue_active.avg.pct_of_peak_sustained_active'):.1f}% local st/ld sectors {T('l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum'):.0f}/{T('l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum'):.0f} lds/sts {T('smsp__sass_inst_executed_op_shared_ld.sum')/1e6:.1f}/{T('smsp__sass_inst_executed_op_shared_st.sum')/1e6:.1f} M")
PY
done
done
echo "call took $(( $(date +%s) - T0 )) s"
