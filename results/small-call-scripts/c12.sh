#!/usr/bin/env bash
# session 25, call 2: old (4b79f33) vs s25b (one solve's streams made when the kernel is made); MUTAG split into tiles
# (--tile-size 94 / 63: the tile threads' host work side by side and beside the GPU)
set -u
B=/tmp/b; mkdir -p $B; S=.peers/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in old s25b; do xz -dc .carry/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  local t0=$(date +%s.%N)
  $B/octile-$v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  local t1=$(date +%s.%N)
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])} tiles {s['tiles']} process {$t1-$t0:.3f}\")"
  cp /tmp/k_${s}_$v$tag.json $O/sum_${s}_$v$tag.$RANDOM.json 2>/dev/null; }
cmp() { python3 -c "
import numpy as np; b=np.load('/tmp/k_$1_old.npy'); a=np.load('/tmp/k_$1_$2.npy')
print('$1 $2 vs old: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel', float((abs(a-b)/abs(b)).max()))"; }
{
for r in 1 2 3 4 5 6 7; do for v in old s25b; do run $v mutag ""; done; run s25b mutag _t94 --tile-size 94; run s25b mutag _t63 --tile-size 63; run s25b mutag _t47 --tile-size 47; done
cmp mutag s25b; cmp mutag s25b_t94; cmp mutag s25b_t63; cmp mutag s25b_t47
for r in 1 2; do for v in old s25b; do run $v chembl ""; run $v nws ""; done; done; cmp chembl s25b; cmp nws s25b
} > $O/c12.log 2>&1
grep -v -E "^(old|s25b) " $O/c12.log
for s in mutag mutag_t94 mutag_t63 mutag_t47 chembl nws; do for v in old s25b; do n=$(grep -cE "^$v $s " $O/c12.log); [ $n -gt 0 ] && echo "median $v $s $(grep -E "^$v $s " $O/c12.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($n runs)"; done; done
for v in old s25b s25b_t94 s25b_t63; do echo "== timeline mutag $v (first tile)"; python3 scripts/timeline $O/sum_mutag_$v.*.json; done
python3 - $O <<'PY'
import json,glob,sys
for tag in ("s25b_t94","s25b_t63","s25b_t47"):
    for f in sorted(glob.glob(f"{sys.argv[1]}/sum_mutag_{tag}.*.json"))[:2]:
        s=json.load(open(f)); t=s["timeline"]["tiles"]
        print(tag, "seconds %.4f" % s["seconds"], " | ".join(f"tile {x[0]}-{x[1]}x{x[2]}-{x[3]} w{x[4]} start {x[5]*1e3:.2f} computed {x[6]*1e3:.2f} written {x[8]*1e3:.2f}" for x in t))
PY
