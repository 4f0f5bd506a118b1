#!/usr/bin/env bash
# session 34, profile call: plain vs --gradient on BA, ChEMBL, NWS with HEAD's bundle — the call's
# seconds (3 runs), each launch alone (`-v`: launches synchronized and timed), and Nsight Compute
# sections of BA's resident launches, plain and gradient.
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
[ -x $B/octile ] || xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
[ -f /tmp/sets/ba.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets
OCT=$B/octile; S=/tmp/sets
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in ${PSETS:-ba chembl nws}; do
  for g in "" "--gradient"; do
    t=""
    for r in 1 2 3; do
      $OCT gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/o.npy --quiet $g
      t="$t $(python3 -c "import json;print(round(json.load(open('/tmp/o.json'))['seconds'],4))")"
    done
    echo "$s ${g:-plain}: seconds$t"
    $OCT -v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/o.npy --quiet $g 2> $O/v_${s}${g}.txt
    grep -E "resident: launch" $O/v_${s}${g}.txt | sed 's/^.*resident: //' | sort | uniq -c | sort -rn | head -12
    grep -E "resident: (all|packed)" $O/v_${s}${g}.txt | sed 's/^.*resident: //'
  done
done
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats"
for g in "" "--gradient"; do
  timeout 200 $NCU -k regex:mgk_resident "$OCT" gram $S/ba.jsonl --kernel $S/ba.toml --out /tmp/o.npy --quiet $g > $O/ncu_ba${g}.txt 2>&1
  echo "== ncu ba ${g:-plain}"
  grep -E "^  mgk_[a-z_0-9]+|Duration|Executed Instructions  |Issue Slots Busy|Avg. Active Threads Per Warp|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Local Memory Spilling Requests  |Warp Cycles Per Issued|Memory Throughput|L1/TEX Hit|Block Limit|Dynamic Shared" $O/ncu_ba${g}.txt | head -80
done
