#pragma once
// What this CPU can run, for the few core loops with a vector version beside the baseline one
// (the core library is built for baseline x86-64). Asked by a plain call rather than
// target_clones: a clone's ifunc resolver runs while the dynamic loader relocates the library,
// before ThreadSanitizer's runtime has started, and its instrumented code crashed every
// TSan-built program at load. Each answer is computed once.
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace infer::detail {

inline bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2;
#else
    return false;
#endif
}

// F16C (with AVX and the OS saving YMM registers), from CPUID leaf 1 directly: clang 14's
// __builtin_cpu_supports does not know "f16c".
inline bool cpu_has_f16c() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool supported = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
        const bool avx = (ecx & bit_AVX) != 0, osxsave = (ecx & bit_OSXSAVE) != 0;
        const bool f16c = (ecx & bit_F16C) != 0;
        if (!(avx && osxsave && f16c)) return false;
        unsigned xcr0_low = 0, xcr0_high = 0;  // XCR0 bits 1 and 2: SSE and AVX state saved
        __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
        return (xcr0_low & 0x6) == 0x6;
    }();
    return supported;
#else
    return false;
#endif
}

}  // namespace infer::detail
