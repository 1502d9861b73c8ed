#pragma once
// What this CPU can run, asked once (CPUID through the compiler's builtins): the kernels with
// hand-written AVX2 paths choose them at run time, so that one build runs on any x86-64 and
// uses what each machine has.
namespace infer::cpu {

inline bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}

// AVX2 with fused multiply-add: what the f32 AVX2 paths (GELU, LayerNorm, epilogues) use.
inline bool has_avx2_fma() {
    static const bool yes = has_avx2() && __builtin_cpu_supports("fma");
    return yes;
}

// AVX-512 Foundation with the 256-bit forms and their k-mask stores (VL).
inline bool has_avx512f_vl() {
    static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
    return yes;
}

// And the byte and word forms (BW): masked byte stores.
inline bool has_avx512_bw() {
    static const bool yes = has_avx512f_vl() && __builtin_cpu_supports("avx512bw");
    return yes;
}

// The widest vectors a row kernel can use here, for kernels written for AVX-512 and AVX2 with a
// scalar fallback: one value to switch on instead of a pair of flags at every dispatch.
enum class VectorIsa { scalar, avx2, avx512 };

// For f32 lanes (AVX-512 F + VL, or AVX2 + FMA).
inline VectorIsa float_vector_isa() {
    static const VectorIsa isa = has_avx512f_vl() ? VectorIsa::avx512 : has_avx2_fma() ? VectorIsa::avx2
                                                                                     : VectorIsa::scalar;
    return isa;
}

// For kernels that also narrow to bytes (AVX-512 needs BW for its byte stores).
inline VectorIsa byte_vector_isa() {
    static const VectorIsa isa = has_avx512_bw() ? VectorIsa::avx512 : has_avx2_fma() ? VectorIsa::avx2
                                                                                   : VectorIsa::scalar;
    return isa;
}

}  // namespace infer::cpu
