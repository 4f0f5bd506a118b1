#!/usr/bin/env bash
# Nsight Compute on octile's solver kernel and on GraphDot's, same sets, same GPU: duration, executed
# instructions, active threads per warp, occupancy, local-memory spills, stall reasons.
#   SETS_DIR=.peers/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=.bundle/octile SETS="nws40 ba40" bash benches/peers/graphdot/ncu.sh
# (run compare.sh once before in the same call, or let this script install GraphDot: it does.)
set -uo pipefail
KIT=${KIT:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}; KIT=$(cd "$KIT" && pwd)
D=$(cd "${SETS_DIR:?}" && pwd); OCT=$(readlink -f "${OCT:?}"); OUT=${OUT:-/tmp/ncu_out}; mkdir -p "$OUT" /tmp/ncu_w
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis"
for s in ${SETS:-nws40 ba40}; do
  "$OCT" gram $D/$s.jsonl --kernel $D/$s.toml --out /tmp/ncu_w/o.npy --quiet   # fills the JIT cache
  $NCU -k regex:${OCTILE_KERNEL_REGEX:-mgk_solve} -c 1 "$OCT" gram $D/$s.jsonl --kernel $D/$s.toml --out /tmp/ncu_w/o.npy --quiet > $OUT/ncu_octile_$s.txt 2>&1
done
P=${PEER_WHEELS:-$KIT/wheels}; T=/tmp/gd; mkdir -p $T
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target $T $P/pytools-*.whl $P/platformdirs-*.whl $P/mako-*.whl $P/siphash24-*.whl ${PEER_PREBUILT:-$KIT/prebuilt}/pycuda-*-cp312-*.whl
tar -xzf $P/graphdot-0.8.1.tar.gz -C $T --strip-components=1 graphdot-0.8.1/graphdot
export PYTHONPATH="$T:$KIT/shims" PYCUDA_CACHE_DIR=/tmp/pycuda-cache PATH=/usr/local/cuda/bin:$PATH; mkdir -p /tmp/pycuda-cache
for s in ${SETS:-nws40 ba40}; do
  $NCU -k regex:graph_kernel -c 1 python3 $KIT/gd_sets.py $D /tmp/ncu_w $s:0 > $OUT/ncu_graphdot_$s.txt 2>&1
done
for f in $OUT/ncu_*.txt; do
  echo "== $(basename $f .txt)"
  grep -E "^  [a-z_]+.*\(|Duration|Executed Instructions  |Avg. Active Threads Per Warp|Achieved Occupancy|Registers Per Thread|Local Memory Spilling Requests  |Warp Cycles Per Issued" $f
done
