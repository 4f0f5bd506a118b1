; The launch's dynamic shared memory, declared in its own address space (3) so that LLVM knows
; where every pointer derived from it points: InferAddressSpaces then emits ld.shared / st.shared
; (LDS / STS) instead of generic loads with 64-bit address arithmetic. Rust has no address-space
; statics; kernels-gpu/src/smem.rs declares the accessor, tools/ptx-link.sh links this module in.
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@dynamic_smem = external addrspace(3) global [0 x i8], align 16

define ptr @octile_dynamic_smem() #0 {
  ret ptr addrspacecast (ptr addrspace(3) @dynamic_smem to ptr)
}

attributes #0 = { alwaysinline nounwind readnone speculatable willreturn }
