#!/usr/bin/env bash
# session 25, call 1: MUTAG's fixed costs — old (4b79f33's binary, the landed kernels) vs s25a (streams lent by a per-device
# pool; finer phase marks in a block's submission), alternating; nsys API summary of one MUTAG call if nsys is there;
# Nsight Compute on MUTAG's launches; ChEMBL and NWS unchanged?
set -u
B=/tmp/b; mkdir -p $B; S=.peers/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in old s25a; do xz -dc .carry/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nproc
run() { local v=$1 s=$2 tag=$3; shift 3
  $B/octile-$v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"
  cp /tmp/k_${s}_$v$tag.json $O/sum_${s}_$v$tag.$RANDOM.json 2>/dev/null; }
cmp() { python3 -c "
import numpy as np; b=np.load('/tmp/k_$1_old$2.npy'); a=np.load('/tmp/k_$1_$3$2.npy')
print('$1$2 $3 vs old: bit-identical', int((a==b).sum()), 'of', a.size)"; }
{
for r in 1 2 3 4 5 6 7; do for v in old s25a; do run $v mutag ""; done; done; cmp mutag "" s25a
for r in 1 2; do for v in old s25a; do run $v chembl ""; run $v nws ""; done; done; cmp chembl "" s25a; cmp nws "" s25a
for r in 1 2; do for v in old s25a; do run $v chembl _g --gradient; done; done; cmp chembl _g s25a
} > $O/c11.log 2>&1
grep -v -E "^(old|s25a) " $O/c11.log
for s in mutag chembl nws chembl_g; do for v in old s25a; do echo "median $v $s $(grep -E "^$v $s " $O/c11.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c11.log) runs)"; done; done
for v in old s25a; do echo "== timeline mutag $v"; python3 scripts/timeline $O/sum_mutag_$v.*.json; done
NS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NS:-none}"
if [ -n "$NS" ]; then
  timeout 120 $NS profile -t cuda,osrt -o /tmp/nm --force-overwrite true $B/octile-s25a gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/nm.npy --quiet > /tmp/nsys.log 2>&1 || tail -5 /tmp/nsys.log
  timeout 60 $NS stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum /tmp/nm.nsys-rep > $O/nsys_mutag_stats.txt 2>&1; head -80 $O/nsys_mutag_stats.txt
  timeout 60 $NS stats -r cuda_api_trace,cuda_gpu_trace --format csv /tmp/nm.nsys-rep > $O/nsys_mutag_trace.csv 2>&1; wc -l $O/nsys_mutag_trace.csv
fi
M=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__block_size
timeout 90 ncu --kernel-name regex:mgk_ --metrics $M --csv $B/octile-s25a gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/ncu_m.npy --quiet > $O/ncu_mutag.csv 2>/tmp/ncu_err.log || tail -3 /tmp/ncu_err.log
python3 - $O/ncu_mutag.csv <<'PY'
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
    print(f"ncu #{i} {k}: {m.get('gpu__time_duration.sum',0)/1e3:.1f} us grid {m.get('launch__grid_size',0):.0f}x{m.get('launch__block_size',0):.0f} inst {m.get('smsp__inst_executed.sum',0)/1e6:.2f} M lanes/inst {m.get('smsp__thread_inst_executed.sum',0)/max(1,m.get('smsp__inst_executed.sum',1)):.1f} warps active {m.get('sm__warps_active.avg.pct_of_peak_sustained_active',0):.1f} % issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active',0):.1f} % regs {m.get('launch__registers_per_thread',0):.0f} blocks/SM regs/smem {m.get('launch__occupancy_limit_registers',0):.0f}/{m.get('launch__occupancy_limit_shared_mem',0):.0f}")
PY
