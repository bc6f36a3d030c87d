#pragma once
// Vectorised exp, log and log1p for loops marked `#pragma omp simd`. glibc's libmvec has SIMD
// variants of these functions (SSE2 to AVX-512), but glibc's headers announce them only under
// -ffast-math, whose other effects (no NaN or infinity, reassociation) pdsp cannot accept. These
// declarations announce the same variants without that flag; where libmvec is not available
// the loops stay scalar and compute the same values more slowly.
#include <cmath>
#include <cstdint>

#if defined(__GLIBC__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
extern "C" {
__attribute__((simd("notinbranch"))) double exp(double) noexcept;
__attribute__((simd("notinbranch"))) double log(double) noexcept;
__attribute__((simd("notinbranch"))) double log1p(double) noexcept;
}
#endif

namespace pdsp {

// Doubles in the widest SIMD register pdsp is built for (AVX-512). Loops whose trip count is a
// multiple of it never reach the scalar remainder, where exp and log are libm's scalar calls.
inline constexpr int64_t kVectorDoubles = 8;

inline int64_t round_up_to_vector(int64_t n) {
  return (n + kVectorDoubles - 1) / kVectorDoubles * kVectorDoubles;
}

}  // namespace pdsp
