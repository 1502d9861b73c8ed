#pragma once
// Whether this CPU has AVX2, for the few core loops with an AVX2 version beside the baseline
// one (the core library is built for baseline x86-64). Chosen by a plain call rather than
// target_clones: a clone's ifunc resolver runs while the dynamic loader relocates the library,
// before ThreadSanitizer's runtime has started, and its instrumented code crashed every
// TSan-built program at load.
namespace infer::detail {

inline bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2;
#else
    return false;
#endif
}

}  // namespace infer::detail
