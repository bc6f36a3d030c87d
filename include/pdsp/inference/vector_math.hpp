#pragma once
// Vectorised exp, log and log1p for loops marked `#pragma omp simd`. glibc's libmvec has SIMD
// variants of these functions (SSE2 to AVX-512), but glibc's headers announce them only under
// -ffast-math, whose other effects (no NaN or infinity, reassociation) pdsp cannot accept. These
// declarations announce the same variants without that flag; where libmvec is not available
// the loops stay scalar and compute the same values more slowly.
#include <cmath>

#if defined(__GLIBC__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
extern "C" {
__attribute__((simd("notinbranch"))) double exp(double) noexcept;
__attribute__((simd("notinbranch"))) double log(double) noexcept;
__attribute__((simd("notinbranch"))) double log1p(double) noexcept;
}
#endif
