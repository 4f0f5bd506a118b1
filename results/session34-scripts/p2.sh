#!/usr/bin/env bash
# session 34, A/B call: HEAD's octile (old: .carry/bundle.tar.xz's) against this session's build
# (new: .carry/s34/oct-$NEW.xz, stripped, its kernels embedded): alternating rounds of plain and
# --gradient calls, values compared; then Nsight Compute on BA's gradient launches of both.
set -u
T0=$(date +%s); L=${LIMIT:-200}; NEW=${NEW:-v2}
O=${OUT:-/tmp/out}; mkdir -p $O /tmp/sets /tmp/b; S=/tmp/sets
xz -dc .carry/sets.tar.xz | tar -xf - -C $S
xz -dc .carry/bundle.tar.xz | tar -xf - -C /tmp/b octile
mkdir -p /tmp/bn && xz -dc .carry/s34/oct-$NEW.xz > /tmp/bn/octile && chmod +x /tmp/bn/octile
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  B=/tmp/b; [ $v = n ] && B=/tmp/bn
  timeout 60 $B/octile gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])} kernels {s.get('device','')[-12:]}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_o$2.npy'); a=np.load('/tmp/k_$1_n$2.npy')
print('$1$2 new vs old: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
g1, g2 = '/tmp/k_$1_o$2.grad.npy', '/tmp/k_$1_n$2.grad.npy'
if os.path.exists(g1):
    gb=np.load(g1); ga=np.load(g2); print('$1$2 new vs old gradient: bit-identical', int((ga==gb).sum()), 'of', ga.size, 'max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"; }
CASES=${CASES:-"ba:_g:--gradient nws:_g:--gradient ba:: mutag:_g:--gradient chembl:_g:--gradient"}
r=0
while [ $(( $(date +%s) - T0 )) -lt $(( L - 20 )) ] && [ $r -lt ${ROUNDS:-5} ]; do r=$((r+1))
  for v in o n; do for c in $CASES; do IFS=: read s tag args <<< "$c"; run $v $s "$tag" $args; done; done
  if [ $r = 1 ]; then for c in $CASES; do IFS=: read s tag args <<< "$c"; cmpv $s "$tag"; done; fi
done 2>&1 | tee $O/ab.log | grep -v -E "^(o|n) "
for c in $CASES; do IFS=: read s tag args <<< "$c"; for v in o n; do echo "median $v $s$tag $(grep -E "^$v $s$tag " $O/ab.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s$tag " $O/ab.log) runs)"; done; done
echo "A/B took $(( $(date +%s) - T0 )) s"
if [ -n "${NCU-1}" ]; then   # NCU= (set, empty) turns it off: ${NCU:-1} took empty as unset and ran it
  M="--metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,lts__t_sectors_op_red.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"
  for v in o n; do
    B=/tmp/b; [ $v = n ] && B=/tmp/bn
    timeout 150 ncu --clock-control none -k regex:mgk_resident $M --csv $B/octile gram $S/ba.jsonl --kernel $S/ba.toml --out /tmp/nc.npy --quiet --gradient > $O/ncu_ba_g_$v.csv 2>&1
    echo "== ncu ba gradient $v"; python3 - $O/ncu_ba_g_$v.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 14 and r[0].isdigit()]
by = collections.defaultdict(dict)
for r in rows: by[(int(r[0]), r[4])][r[12]] = r[14]
for (i, k), m in sorted(by.items()):
    print(i, k, "; ".join(f"{a.split('__')[-1] if 'stalled' not in a else a.split('stalled_')[1].split('_per')[0]}={b}" for a, b in m.items()))
PY
  done
fi
echo "call took $(( $(date +%s) - T0 )) s"
