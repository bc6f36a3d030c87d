// Measures the machine limits that bound message passing (docs/benchmarks.md, cost model):
// vectorised exp / log / log1p throughput (the same libmvec variants the kernels call, on an
// L1-resident buffer), the peak rate of multiply-adds (what bounds the matrix-vector products of
// many-state tables) and streaming memory bandwidth (read and triad, on a buffer that fits the
// last-level cache and on one that does not), on one thread and on every OpenMP thread. Prints
// a table, and with a file argument writes `key value` lines that run/*.sh read.
//   pdsp_limit_probe [OUTPUT_FILE]
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "pdsp/inference/vector_math.hpp"
#include "pdsp/util/clock.hpp"

namespace {

using pdsp::Clock;
using pdsp::seconds_since;

// Runs `work` (which processes `items` items per call) on `threads` threads, `calls` times per
// parallel region (so that short calls do not measure the start-up of the region), until 0.3 s
// have passed; returns items per second, the best of 3 such runs.
double throughput(int threads, double items, int calls, const std::function<void(int)>& work) {
  double best = 0.0;
  for (int run = 0; run < 3; ++run) {
    int64_t regions = 0;
    const auto start = Clock::now();
    double elapsed = 0.0;
    do {
#pragma omp parallel num_threads(threads)
      for (int call = 0; call < calls; ++call) work(omp_get_thread_num());
      ++regions;
      elapsed = seconds_since(start);
    } while (elapsed < 0.3);
    best = std::max(best, items * threads * calls * static_cast<double>(regions) / elapsed);
  }
  return best;
}

constexpr int kMathCalls = 256;  // calls per region for the L1-resident math probes

constexpr int64_t kLane = 4096;  // doubles per thread for the math probes: 32 KiB, L1-resident

struct MathBuffers {
  std::vector<std::vector<double>> in, out;
  explicit MathBuffers(int threads) : in(threads), out(threads) {
    for (int t = 0; t < threads; ++t) {
      in[t].resize(kLane);
      out[t].resize(kLane);
      for (int64_t i = 0; i < kLane; ++i) in[t][i] = -8.0 + 16.0 * static_cast<double>(i) / kLane;
    }
  }
};

double exp_rate(int threads, MathBuffers& b) {
  return throughput(threads, kLane, kMathCalls, [&](int t) {
    const double* x = b.in[t].data();
    double* y = b.out[t].data();
#pragma omp simd
    for (int64_t i = 0; i < kLane; ++i) y[i] = std::exp(x[i]);
  });
}

double log_rate(int threads, MathBuffers& b) {
  return throughput(threads, kLane, kMathCalls, [&](int t) {
    const double* x = b.in[t].data();
    double* y = b.out[t].data();
#pragma omp simd
    for (int64_t i = 0; i < kLane; ++i) y[i] = std::log(std::abs(x[i]) + 0.5);
  });
}

double log1p_rate(int threads, MathBuffers& b) {
  return throughput(threads, kLane, kMathCalls, [&](int t) {
    const double* x = b.in[t].data();
    double* y = b.out[t].data();
#pragma omp simd
    for (int64_t i = 0; i < kLane; ++i) y[i] = std::log1p(std::abs(x[i]));
  });
}

// The scalar libm exp, for comparison: called through a pointer so it cannot be vectorised.
double scalar_exp_rate(int threads, MathBuffers& b) {
  double (*volatile scalar_exp)(double) = static_cast<double (*)(double)>(std::exp);
  return throughput(threads, kLane, kMathCalls, [&](int t) {
    const double* x = b.in[t].data();
    double* y = b.out[t].data();
    for (int64_t i = 0; i < kLane; ++i) y[i] = scalar_exp(x[i]);
  });
}

// Multiply-adds per second with every operand in registers: kChains independent chains, enough
// to hide the latency of the FMA units of current cores, and far more items than the loop's
// overhead. The peak that no kernel streaming tables from memory can pass.
constexpr int kChains = 64;
constexpr int64_t kFmaSteps = 4096;

double multiply_add_rate(int threads) {
  std::vector<double> sink(static_cast<size_t>(threads));
  return throughput(threads, static_cast<double>(kChains * kFmaSteps), 16, [&](int t) {
    double acc[kChains];
    for (int k = 0; k < kChains; ++k) acc[k] = 1.0 + 1e-3 * k;
    const double scale = 0.999999, shift = sink[t] * 1e-300 + 1e-7;
    for (int64_t step = 0; step < kFmaSteps; ++step) {
#pragma omp simd
      for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * scale + shift;
    }
    double total = 0.0;
    for (int k = 0; k < kChains; ++k) total += acc[k];
    sink[t] += total;  // keeps the chains alive
  });
}

// Bytes per second of a read-only sum and of a triad a = b + s c over `bytes` per array.
struct Bandwidth {
  double read;
  double triad;
};

Bandwidth bandwidth(int threads, int64_t bytes) {
  const int64_t n = bytes / static_cast<int64_t>(sizeof(double));
  std::vector<double> a(static_cast<size_t>(n)), b(a.size()), c(a.size());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {  // first touch by the thread that streams the range later
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  std::vector<double> sums(static_cast<size_t>(threads));
  const auto range = [&](int t, int64_t& first, int64_t& last) {
    first = n * t / threads;
    last = n * (t + 1) / threads;
  };
  Bandwidth result{};
  result.read = throughput(threads, static_cast<double>(bytes) / threads, 1, [&](int t) {
    int64_t first, last;
    range(t, first, last);
    const double* x = b.data();
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = first; i < last; ++i) sum += x[i];
    sums[t] += sum;
  });
  result.triad = throughput(threads, 3.0 * static_cast<double>(bytes) / threads, 1, [&](int t) {
    int64_t first, last;
    range(t, first, last);
    double* y = a.data();
    const double* x = b.data();
    const double* z = c.data();
#pragma omp simd
    for (int64_t i = first; i < last; ++i) y[i] = x[i] + 0.5 * z[i];
  });
  return result;
}

constexpr int kQuantities = 9;
constexpr int kRates = 5;  // the first ones, per second; the others are bandwidths

struct Limits {
  double values[kQuantities];
};

constexpr const char* kKeys[kQuantities] = {"exp_per_s",
                                            "log_per_s",
                                            "log1p_per_s",
                                            "scalar_exp_per_s",
                                            "fma_per_s",
                                            "cache_read_bytes_per_s",
                                            "cache_triad_bytes_per_s",
                                            "memory_read_bytes_per_s",
                                            "memory_triad_bytes_per_s"};
constexpr const char* kLabels[kQuantities] = {
    "vector exp (1/s)",    "vector log (1/s)",    "vector log1p (1/s)",
    "scalar exp (1/s)",    "multiply-add (1/s)",  "read 32 MiB (GB/s)",
    "triad 32 MiB (GB/s)", "read 512 MiB (GB/s)", "triad 512 MiB (GB/s)"};
constexpr int64_t kCacheBytes = int64_t{32} << 20;    // per array: fits a large last-level cache
constexpr int64_t kMemoryBytes = int64_t{512} << 20;  // per array: main memory

Limits measure(int threads) {
  MathBuffers buffers(threads);
  const Bandwidth cache = bandwidth(threads, kCacheBytes);
  const Bandwidth memory = bandwidth(threads, kMemoryBytes);
  return {{exp_rate(threads, buffers), log_rate(threads, buffers), log1p_rate(threads, buffers),
           scalar_exp_rate(threads, buffers), multiply_add_rate(threads), cache.read, cache.triad,
           memory.read, memory.triad}};
}

}  // namespace

int main(int argc, char** argv) {
  const int cores = omp_get_max_threads();
  const Limits one = measure(1);
  const Limits all = cores > 1 ? measure(cores) : one;
  std::printf("# pdsp limit probe: 1 thread and %d OpenMP threads\n", cores);
  std::printf("%-24s %14s %14s\n", "quantity", "1 thread", "all threads");
  for (int i = 0; i < kQuantities; ++i) {
    const double scale = i < kRates ? 1.0 : 1e-9;
    std::printf("%-24s %14.4g %14.4g\n", kLabels[i], one.values[i] * scale, all.values[i] * scale);
  }
  if (argc < 2) return 0;
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::fprintf(stderr, "pdsp_limit_probe: cannot write %s\n", argv[1]);
    return 1;
  }
  std::fprintf(out, "threads %d\n", cores);
  for (int i = 0; i < kQuantities; ++i)
    std::fprintf(out, "%s_1 %.6g\n%s_all %.6g\n", kKeys[i], one.values[i], kKeys[i], all.values[i]);
  return std::fclose(out) == 0 ? 0 : 1;
}
