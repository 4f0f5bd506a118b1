#!/usr/bin/env bash
# octile's bitcode link step for the nvptx64-nvidia-cuda target (rustc's linker flavor "llbc").
#
# rustc calls the linker given by `-C linker=` with:
#   --export-symbol NAME ...   kernels to keep            *.o    LLVM bitcode of the crate
#   *.rlib                     bitcode archives (core, octile-types, libm, ...)
#   --target T --target-cpu C [--target-feature=+x,...] -o OUT.ptx -O<n> [--debug] [-L dir]
# We do what rust's llvm-bitcode-linker would: llvm-link everything needed into one module,
# internalize all but the exported kernels, optimise (opt), and emit PTX (llc). The tools come from
# the pinned nightly's `llvm-tools` component; OCTILE_LLVM_BIN overrides their directory.
set -euo pipefail

die() { echo "ptx-link: $*" >&2; exit 1; }

if [ -n "${OCTILE_LLVM_BIN:-}" ]; then
  bin=$OCTILE_LLVM_BIN
else
  sysroot=$(rustc --print sysroot)
  host=$(rustc -vV | sed -n 's/^host: //p')
  bin="$sysroot/lib/rustlib/$host/bin"
fi
for t in llvm-link opt llc llvm-ar; do
  [ -x "$bin/$t" ] || die "missing $bin/$t: run 'rustup component add llvm-tools --toolchain $(basename "$sysroot")'"
done

keep=(); objects=(); archives=(); out=""; cpu=sm_90; features=""; olevel=-O3; triple=nvptx64-nvidia-cuda
while [ $# -gt 0 ]; do
  case "$1" in
    --export-symbol) keep+=("$2"); shift 2 ;;
    --target) triple=$2; shift 2 ;;
    --target-cpu) cpu=$2; shift 2 ;;
    --target-feature=*) features=${1#--target-feature=}; shift ;;
    -o) out=$2; shift 2 ;;
    -L) shift 2 ;;
    -O*) olevel=$1; shift ;;
    --debug) shift ;;
    *.rlib | *.a) archives+=("$1"); shift ;;
    *.o) objects+=("$1"); shift ;;
    *) shift ;; # unknown flags are harmless for this link
  esac
done
[ -n "$out" ] || die "no -o OUT given"
[ ${#keep[@]} -gt 0 ] || die "no --export-symbol given (no kernels?)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Members of the archives that are bitcode are linked lazily (--only-needed): only what the
# kernels reach ends up in the module.
lazy=()
n=0
for a in ${archives[@]+"${archives[@]}"}; do
  dir="$work/a$n"; n=$((n + 1)); mkdir -p "$dir"
  (cd "$dir" && "$bin/llvm-ar" x "$a")
  for member in "$dir"/*; do
    [ -f "$member" ] && [ "$(head -c 2 "$member")" = "BC" ] && lazy+=(--only-needed "$member")
  done
done

mattr=()
[ -n "$features" ] && mattr=(-mattr="$features")
exports=$(IFS=,; echo "${keep[*]}")

# tools/smem.ll: the shared arrays in their own address space (see there)
smem_ll="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/smem.ll"
"$bin/llvm-link" "${objects[@]}" "$smem_ll" ${lazy[@]+"${lazy[@]}"} -o "$work/linked.bc"
"$bin/opt" -nvptx-short-ptr -mtriple="$triple" -mcpu="$cpu" ${mattr[@]+"${mattr[@]}"} \
  -unroll-runtime=false -internalize-public-api-list="$exports" -passes="internalize,globaldce,default<${olevel#-}>" \
  "$work/linked.bc" -o "$work/opt.bc"
"$bin/llc" -nvptx-short-ptr "$olevel" -mtriple="$triple" -mcpu="$cpu" ${mattr[@]+"${mattr[@]}"} "$work/opt.bc" -o "$out"
