#!/usr/bin/env bash
# kernels-only build (nested cargo into target/ptx, the host build's flags) and ptxas -v of chosen entries
# with the launch bounds copied from the last full build's PTX; session 35's spill diagnosis. usage: kb.sh ENTRY...
set -euo pipefail
cd /work/main
root=$PWD
sysroot=$(rustc --print sysroot); host=$(rustc -vV | sed -n 's/^host: //p')
linker=$(ls -d target/ptx/link-* | head -1)/ptx-link.sh
flags="-Ctarget-cpu=sm_90"$'\x1f'"-Zunstable-options"$'\x1f'"-Cpanic=immediate-abort"$'\x1f'"-Cllvm-args=-unroll-runtime=false"$'\x1f'"-Clinker=$root/$linker"
(cd kernels-gpu && CARGO_ENCODED_RUSTFLAGS="$flags" OCTILE_LLVM_BIN="$sysroot/lib/rustlib/$host/bin" env -u RUSTFLAGS cargo build -q --release --target nvptx64-nvidia-cuda -Zbuild-std=core --manifest-path $root/kernels-gpu/Cargo.toml --target-dir $root/target/ptx)
python3 - "$@" <<'PY'
import re,sys
raw=open('/work/main/target/ptx/nvptx64-nvidia-cuda/release/octile_kernels.ptx').read()
ref=open(sorted(__import__('glob').glob('/work/main/target/release/build/octile-*/out/octile_kernels.ptx'))[0]).read()
# directives per entry from the reference (built) PTX
for m in re.finditer(r'\.visible \.entry (\w+)\(.*?\)((?:\n\.(?:maxntid|minnctapersm|maxnreg)[^\n]*)+)', ref, re.S):
    name,d=m.group(1),m.group(2)
    head='.visible .entry %s('%name
    s=raw.find(head)
    if s<0: continue
    c=s+raw[s:].find(')')
    raw=raw[:c+1]+d+raw[c+1:]
open('/tmp/k.ptx','w').write(raw)
PY
ptxas=$(ls $root/.venv/lib/python*/site-packages/nvidia/cu13/bin/ptxas 2>/dev/null || find $root/.venv -name ptxas -type f | head -1)
for e in "$@"; do
  $ptxas -arch=sm_90 -O3 -v -e "$e" -o /tmp/k.cubin /tmp/k.ptx 2>&1 | grep -E "Used|spill" | tr '\n' ' ' | sed "s/^/$e: /"; echo
done
