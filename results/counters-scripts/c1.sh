#!/usr/bin/env bash
# session 29, call 1: where the resident product entries' instructions go (SASS-level counts), MUTAG and ChEMBL
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s29/octile-base.xz > $B/oct; chmod +x $B/oct; xz -dc .carry/s29/k.cubin.xz > $B/k.cubin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ncu --version | tail -1
for r in 1 2 3; do $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/m.npy --quiet; python3 -c "import json; s=json.load(open('/tmp/m.json')); print('mutag %.4f s it %s' % (s['seconds'], s['iterations']))"; done
$B/oct -v gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/m.npy --quiet 2>&1 | grep -E "resident: launch" | head -20
cuobjdump -sass $B/k.cubin > $O/sass.txt 2>&1; echo "sass rc=$? $(wc -l < $O/sass.txt)"
timeout 150 ncu --section SourceCounters --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats -k regex:mgk_resident -o $O/mutag $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/n.npy --quiet > /tmp/ncu1.log 2>&1; echo "ncu mutag rc=$?"; tail -3 /tmp/ncu1.log
timeout 150 ncu --section SourceCounters --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section Occupancy --section LaunchStats -k regex:mgk_resident --launch-count 3 -o $O/chembl $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 > /tmp/ncu2.log 2>&1; echo "ncu chembl rc=$?"; tail -3 /tmp/ncu2.log
timeout 150 ncu --section SourceCounters --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section Occupancy --section LaunchStats -k regex:mgk_resident --launch-count 3 -o $O/chembl_g $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/n.npy --quiet --tiles-in-flight 1 --gradient > /tmp/ncu3.log 2>&1; echo "ncu chembl_g rc=$?"; tail -3 /tmp/ncu3.log
for f in mutag chembl chembl_g; do
  ncu --import $O/$f.ncu-rep --page source --csv --print-source sass > $O/${f}_src.csv 2>/tmp/e.log; echo "source $f rc=$? $(wc -c < $O/${f}_src.csv)"; head -c 600 $O/${f}_src.csv; tail -2 /tmp/e.log
  ncu --import $O/$f.ncu-rep --page details --csv > $O/${f}_details.csv 2>&1; echo "details $f rc=$?"
done
cd $O && xz -T8 -6 *.csv sass.txt 2>/dev/null; ls -la $O
