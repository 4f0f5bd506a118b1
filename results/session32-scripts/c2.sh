#!/usr/bin/env bash
# session 32, call 2: spill-free bounds, measured. base = HEAD's kernels (the bundle with the split cubin dac5e0d0);
# B = base's PTX with the tile solver's entries (mgk_solve_*, mgk_gradient_*, tile_bench_*) at `.maxnreg 255` instead of
# `.minnctapersm 5` (ptxas: 179–255 registers, no spills; was 96 registers, 268–1040 B of spill stores);
# C = B and the resident warp gradient entries at `.maxnreg 144` instead of 128 (no spills; was 12–56 B).
# `octile gram`, one process a run, alternating; values against base; then the GPU tests with C's kernels
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
[ -x $B/octile ] || xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/s31/split.cubin.xz > $B/base.cubin
for v in B C; do xz -dc .carry/s32/$v.cubin.xz > $B/$v.cubin; done
for s in mutag nws proteins; do { echo 'solver = "tiles"'; cat $S/$s.toml; } > $S/${s}_t.toml; cp $S/$s.jsonl $S/${s}_t.jsonl; done
V="base B C"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  OCTILE_PTX_FILE=$B/$v.cubin timeout 40 $B/octile gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_base$2.npy')
for v in ['B', 'C']:
    a=np.load(f'/tmp/k_$1_{v}$2.npy'); print('$1$2', v, 'vs base: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
    g1, g2 = '/tmp/k_$1_base$2.grad.npy', f'/tmp/k_$1_{v}$2.grad.npy'
    if os.path.exists(g1):
        gb=np.load(g1); ga=np.load(g2); print('$1$2', v, 'gradient: bit-identical', int((ga==gb).sum()), 'of', ga.size, 'max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"; }
{
for r in 1 2 3; do for v in $V; do run $v mutag_t ""; run $v nws_t ""; run $v mutag _g64 --gradient --precision f64; run $v chembl _g --gradient; run $v mutag _g --gradient; run $v nws _g --gradient; done; done
for x in "mutag_t x" "nws_t x" "mutag _g" "mutag _g64" "chembl _g" "nws _g"; do set -- $x; [ "$2" = x ] && cmpv $1 "" || cmpv $1 $2; done
for r in 1 2; do for v in $V; do run $v proteins_t ""; run $v ba _g --gradient; run $v mutag_t ""; run $v mutag _g --gradient; done; done
for v in $V; do run $v proteins _g --gradient; done
for x in "proteins_t x" "ba _g" "proteins _g"; do set -- $x; [ "$2" = x ] && cmpv $1 "" || cmpv $1 $2; done
} 2>&1 | tee $O/c2.log | grep -v -E "^(base|B|C) "
for s in mutag_t mutag_g nws_t mutag_g64 chembl_g nws_g proteins_t ba_g proteins_g; do for v in $V; do echo "median $v $s $(grep -E "^$v $s " $O/c2.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c2.log) runs)"; done; done
[ "${1:-}" = --no-tests ] && exit 0
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo OCTILE_PTX_FILE=$B/C.cubin
for t in gradient reference resident tiles; do
  timeout 150 $B/tests/$t --test-threads=2 > $O/t_C_$t.log 2>&1; echo "test C $t rc=$? $(grep -E '^test result' $O/t_C_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked' $O/t_C_$t.log | head -5
done
