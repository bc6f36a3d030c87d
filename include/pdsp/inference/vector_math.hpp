#pragma once
// Vectorised exp, log and log1p for loops marked `#pragma omp simd`. glibc's libmvec has SIMD
// variants of these functions (SSE2 to AVX-512), but glibc's headers announce them only under
// -ffast-math, whose other effects (no NaN or infinity, reassociation) pdsp cannot accept. These
// declarations announce the same variants without that flag; where libmvec is not available
// the loops stay scalar and compute the same values more slowly.
#include <algorithm>
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

// The exponent below which a term cannot change a log-sum-exp sum. The soft-max kernels subtract
// the largest exponent first, so one term is exp(0) = 1 and every sum is at least 1 (as is the
// binary kernels' 1 + exp(-|z|)); exp(-700), about 1e-304, is far below half an ulp of such a sum,
// so raising lower exponents to this floor leaves each sum bitwise as it was. It keeps them out of
// libmvec's scalar fallback for exponents below about -708 (subnormal or zero results), at some 25x
// a vector lane's cost: the first, backtracking step of the citations chain (scores of -1e4 at the
// trial thetas) spent three quarters of its 22 s there. Read through a volatile, because GCC folds
// a constant floor into a blend after the call, exp(x < c ? c : x) -> x < c ? exp(c) : exp(x),
// which calls exp on the very exponents the floor is for.
inline double exp_floor() {
  static volatile double floor = -700.0;
  return floor;
}

// x raised to `floor` (NaN stays NaN).
inline double floored(double x, double floor) {
  return x < floor ? floor : x;
}

// Reductions over value(first), ..., value(last - 1): SIMD reductions when the range fills a
// vector and plain loops otherwise. GCC keeps the lanes of an `omp simd` reduction in an array
// on the stack; a range shorter than a vector (the two states of a binary variable) runs only
// the scalar remainder, whose stores into that array the loads after the loop wait on (a failed
// store forward): on yeast's binary pairs these waits were half of a max-sum sweep. A short
// range is summed in index order.
template <class Value>
inline double max_over(int64_t first, int64_t last, double start, Value&& value) {
  double m = start;  // std::max: a NaN may be dropped
  if (last - first < kVectorDoubles) {
    for (int64_t i = first; i < last; ++i) m = std::max(m, value(i));
    return m;
  }
#pragma omp simd reduction(max : m)
  for (int64_t i = first; i < last; ++i) m = std::max(m, value(i));
  return m;
}

template <class Value>
inline double sum_over(int64_t first, int64_t last, Value&& value) {
  double sum = 0.0;
  if (last - first < kVectorDoubles) {
    for (int64_t i = first; i < last; ++i) sum += value(i);
    return sum;
  }
#pragma omp simd reduction(+ : sum)
  for (int64_t i = first; i < last; ++i) sum += value(i);
  return sum;
}

}  // namespace pdsp
