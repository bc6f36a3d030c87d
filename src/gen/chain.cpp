#include "pdsp/gen/chain.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>
#include <ranges>
#include <span>
#include <string>
#include <utility>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

constexpr int64_t kLimit = (int64_t{1} << 31) - 1;  // LocalIndex, and theta's length
constexpr double kLabelShare = 0.5;  // of a token's draws from its label's permuted law
constexpr int kPreferredNext = 3;    // successors a label prefers
constexpr double kSpread = 0.2;      // of a label's transition mass spread over every label
constexpr int kRedraws = 8;          // repeated attributes redrawn before the exact draw

// Independent streams from one seed: splitmix64 of the seed and a stream's tag. std::mt19937_64
// is the same sequence everywhere; the distributions below are our own, since the standard's
// are not (tree_ensemble.cpp does the same).
std::mt19937_64 stream(uint64_t seed, uint64_t tag) {
  uint64_t x = seed ^ (tag * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return std::mt19937_64(x ^ (x >> 31));
}
double uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1p-53;
}
int64_t below(std::mt19937_64& rng, int64_t n) {  // in [0, n), n < 2^31: a bias below 2^-32
  return static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
}

// Log-normal lengths, mean 24 and standard deviation 12.8 before rounding and the cap (sigma
// 0.5: mu = ln 24 - sigma^2 / 2); the normal by Box-Muller.
struct LengthStream {
  std::mt19937_64 rng;
  int32_t next() {
    const double u = 1.0 - uniform(rng), v = uniform(rng);  // u in (0, 1]
    const double z = std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
    const double length = std::round(std::exp(std::log(24.0) - 0.125 + 0.5 * z));
    return static_cast<int32_t>(std::clamp(length, 1.0, double{kMaxSentenceLength}));
  }
};

// A draw from the cumulative probabilities `cdf` (last entry 1).
int64_t draw_from(std::span<const double> cdf, double u) {
  const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
  return std::min<int64_t>(it - cdf.begin(), static_cast<int64_t>(cdf.size()) - 1);
}
void accumulate_to_cdf(std::span<double> weights) {
  std::partial_sum(weights.begin(), weights.end(), weights.begin());
  for (double& w : weights) w /= weights.back();
  weights.back() = 1.0;
}

// A frequency band of ranks [start, start + size), shuffled into positions by x -> (a x + b)
// mod size. Its positions are cut into groups of L: label y owns position y of each group.
struct Band {
  int64_t start = 0, size = 1, a = 1, b = 0, a_inverse = 1;
  int64_t position(int64_t rank) const { return (a * (rank - start) + b) % size; }
  int64_t rank(int64_t q) const { return start + (a_inverse * ((q - b + size) % size)) % size; }
};
int64_t inverse_mod(int64_t a, int64_t n) {  // extended Euclid; gcd(a, n) = 1
  int64_t r0 = n, r1 = a, t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int64_t q = r0 / r1;
    r0 = std::exchange(r1, r0 - q * r1);
    t0 = std::exchange(t1, t0 - q * t1);
  }
  return ((t0 % n) + n) % n;
}

// The Zipf law over A ranks, P(r) proportional to (r + 1)^-s, as its CDF, which draws search
// (a guide table was no faster: its misses in cache cost what the search's do).
struct ZipfLaw {
  std::vector<double> cdf;  // P(rank <= r)

  explicit ZipfLaw(const ChainOptions& o) : cdf(static_cast<size_t>(o.attributes)) {
    double sum = 0, carry = 0;  // compensated: a million terms keep their last digits
    for (size_t r = 0; r < cdf.size(); ++r) {
      const double term = std::pow(static_cast<double>(r + 1), -o.zipf) - carry;
      const double next = sum + term;
      carry = (next - sum) - term;
      cdf[r] = sum = next;
    }
    for (double& c : cdf) c /= sum;
    cdf.back() = 1.0;
  }
  int64_t draw(double u) const { return draw_from(cdf, u); }
  double probability(int64_t r) const { return cdf[r] - (r > 0 ? cdf[r - 1] : 0.0); }
};

// The hidden chain model and the attributes' laws.
class HiddenChain {
 public:
  explicit HiddenChain(const ChainOptions& o) : A_(o.attributes), L_(o.labels), zipf_(o) {
    std::mt19937_64 rng = stream(o.model_seed, 2);
    start_.resize(static_cast<size_t>(L_));
    for (double& w : start_) w = 0.2 + uniform(rng);
    accumulate_to_cdf(start_);
    next_.assign(static_cast<size_t>(L_ * L_), kSpread / static_cast<double>(L_));
    for (int64_t s = 0; s < L_; ++s)
      for (int k = 0; k < std::min<int64_t>(kPreferredNext, L_); ++k)
        next_[s * L_ + below(rng, L_)] += (1.0 - kSpread) / kPreferredNext * (0.5 + uniform(rng));
    for (int64_t s = 0; s < L_; ++s) accumulate_to_cdf(std::span(next_).subspan(s * L_, L_));
    for (int64_t start = 0; start < A_; start = 2 * start + 1) {
      Band band{start, std::min(2 * start + 1, A_) - start};
      band.a = band.size > 1 ? 1 + below(rng, band.size - 1) : 1;
      while (std::gcd(band.a, band.size) != 1) band.a = band.a % (band.size - 1) + 1;
      band.b = below(rng, band.size);
      band.a_inverse = inverse_mod(band.a, band.size);
      bands_.push_back(band);
    }
  }

  int32_t first_label(std::mt19937_64& rng) const {
    return static_cast<int32_t>(draw_from(start_, uniform(rng)));
  }
  int32_t next_label(int32_t y, std::mt19937_64& rng) const {
    return static_cast<int32_t>(draw_from(std::span(next_).subspan(y * L_, L_), uniform(rng)));
  }

  // `active` distinct attributes of a token labelled y, appended to `out` in increasing order;
  // `taken` (one flag per attribute, all clear) is cleared again on return.
  void attributes(int32_t y, int active, std::mt19937_64& rng, std::vector<uint8_t>& taken,
                  std::vector<int32_t>& out) const {
    const size_t first = out.size();
    for (int k = 0; k < active; ++k) {
      int64_t id = -1;
      // Redrawing a repeat until it is new is the law given the attributes taken; after a few
      // repeats the exact conditional draw gives the same law in bounded time.
      for (int tries = 0; tries < kRedraws && (id < 0 || taken[id]); ++tries) {
        const int64_t rank = zipf_.draw(uniform(rng));
        id = uniform(rng) < kLabelShare ? own(y, rank) : rank;
      }
      if (taken[id]) id = draw_new(y, rng, std::span(out).subspan(first));
      taken[id] = 1;
      out.push_back(static_cast<int32_t>(id));
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    for (size_t k = first; k < out.size(); ++k) taken[out[k]] = 0;
  }

 private:
  const Band& band_of(
      int64_t rank) const {  // band k holds the ranks r with r + 1 in [2^k, 2^(k+1))
    return bands_[std::bit_width(static_cast<uint64_t>(rank) + 1) - 1];
  }
  // Where label y's own law moves a drawn rank: to y's position in the rank's group. Bands
  // smaller than L (the 2L or so most frequent attributes) and partial groups keep it.
  int64_t own(int64_t y, int64_t rank) const {
    const Band& band = band_of(rank);
    const int64_t q = band.position(rank), slot = q - q % L_ + y;
    return band.size < L_ || slot >= band.size ? rank : band.rank(slot);
  }
  // The ranks that own(y, .) moves to attribute `id`, appended to `out`.
  void own_preimage(int64_t y, int64_t id, std::vector<int64_t>& out) const {
    const Band& band = band_of(id);
    const int64_t q = band.position(id), group = q - q % L_;
    if (band.size < L_ || group + y >= band.size) return out.push_back(id);
    if (q != group + y) return;  // another label's position: y's own law never gives it
    for (int64_t p = group; p < std::min(group + L_, band.size); ++p) out.push_back(band.rank(p));
  }

  // The token's next attribute drawn exactly from the mixture given that none of `taken` comes:
  // each law's mass outside the taken ranks decides the law, then the law's CDF with the taken
  // ranks' masses cut out is searched (not the own law when its mass left is round-off: it may
  // have no rank left; the shared law always has one).
  int64_t draw_new(int32_t y, std::mt19937_64& rng, std::span<const int32_t> taken) const {
    std::vector<int64_t> shared(taken.begin(), taken.end()), owned;
    for (const int64_t id : shared) own_preimage(y, id, owned);
    const auto excluded_mass = [&](std::vector<int64_t>& ranks, std::vector<double>& prefix) {
      std::sort(ranks.begin(), ranks.end());
      prefix.assign(1, 0.0);
      for (const int64_t r : ranks) prefix.push_back(prefix.back() + zipf_.probability(r));
      return prefix.back();
    };
    std::vector<double> shared_prefix, own_prefix;
    const double shared_left = (1 - kLabelShare) * (1 - excluded_mass(shared, shared_prefix));
    const double own_left = kLabelShare * (1 - excluded_mass(owned, own_prefix));
    const bool is_own = own_left > 1e-12 && uniform(rng) * (shared_left + own_left) < own_left;
    const std::vector<int64_t>& ranks = is_own ? owned : shared;
    const std::vector<double>& prefix = is_own ? own_prefix : shared_prefix;
    const double u = uniform(rng) * (1.0 - prefix.back());
    const auto mass_to = [&](int64_t r) {  // the law's mass up to rank r, taken ranks left out
      const auto cut = std::upper_bound(ranks.begin(), ranks.end(), r) - ranks.begin();
      return zipf_.cdf[r] - prefix[cut];
    };
    const auto all = std::views::iota(int64_t{0}, A_);  // the first rank whose mass_to exceeds u
    const int64_t low =
        *std::ranges::partition_point(all, [&](int64_t r) { return mass_to(r) <= u; });
    // Round-off may land on a taken rank: the nearest free one (there is one: active <= A).
    for (int64_t step = 0;; ++step)
      for (const int64_t r : {low + step, low - step})
        if (r >= 0 && r < A_ && !std::binary_search(ranks.begin(), ranks.end(), r))
          return is_own ? own(y, r) : r;
  }

  int64_t A_, L_;
  std::vector<double> start_, next_;  // cumulative: the first label, each label's successors
  ZipfLaw zipf_;
  std::vector<Band> bands_;  // [2^k - 1, 2^(k+1) - 1), the last cut at A
};

}  // namespace

int64_t chain_num_params(const ChainOptions& o) {
  return int64_t{o.attributes} * o.labels + int64_t{o.labels} * o.labels;
}

void check_chain_options(const ChainOptions& o) {
  if (o.sentences < 1) throw InputError("--sentences: give at least one sentence");
  if (o.attributes < 1) throw InputError("--attributes: give at least one attribute");
  if (o.labels < 2) throw InputError("--labels: give at least 2 labels");
  if (o.active < 1 || o.active > o.attributes)
    throw InputError(
        "--active: " + std::to_string(o.active) +
        " attributes per token is not in [1, --attributes = " + std::to_string(o.attributes) + "]");
  if (!std::isfinite(o.zipf) || o.zipf < 0)
    throw InputError("--zipf: the exponent must be finite and at least 0");
  if (chain_num_params(o) > kLimit)
    throw InputError("--attributes/--labels: " + std::to_string(o.attributes) + " x " +
                     std::to_string(o.labels) + " + " + std::to_string(o.labels) +
                     "^2 = " + std::to_string(chain_num_params(o)) +
                     " parameters; a model holds at most 2^31 - 1");
  // Counted as drawn, stopping at the first total past the limit: at most ~10^8 draws.
  LengthStream lengths{stream(o.seed, 1)};
  int64_t tokens = 0, edges = 0;
  for (int s = 0; s < o.sentences; ++s) {
    const int32_t n = lengths.next();
    tokens += n;
    edges += n - 1;
    for (const auto& [what, count] : {std::pair{"observation entries", tokens * o.active},
                                      {"states", tokens * o.labels},
                                      {"transition table entries", edges * o.labels * o.labels}})
      if (count > kLimit)
        throw InputError("--sentences/--test-sentences: " + std::to_string(o.sentences) +
                         " sentences would hold " + std::to_string(count) + " " + what +
                         "; the generator holds at most 2^31 - 1 (fewer sentences, --active or "
                         "--labels)");
  }
}

std::vector<int32_t> chain_sentence_lengths(const ChainOptions& o) {
  LengthStream lengths{stream(o.seed, 1)};
  std::vector<int32_t> out(static_cast<size_t>(std::max(o.sentences, 0)));
  for (int32_t& n : out) n = lengths.next();
  return out;
}

Dataset generate_chain(const ChainOptions& o) {
  check_chain_options(o);
  const std::vector<int32_t> lengths = chain_sentence_lengths(o);
  const int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
  const int64_t edges = tokens - o.sentences;
  const HiddenChain model(o);
  std::mt19937_64 rng = stream(o.seed, 3);
  Dataset data;
  data.num_params = chain_num_params(o);
  data.card.assign(static_cast<size_t>(tokens), o.labels);
  data.factor_vars.reserve(static_cast<size_t>(2 * edges));
  ObservationRows& obs = data.observations;
  obs.index.reserve(static_cast<size_t>(tokens * o.active));  // the bulk: no spare capacity
  std::vector<uint8_t> taken(static_cast<size_t>(o.attributes), 0);
  for (const int32_t n : lengths) {
    const auto first = static_cast<LocalIndex>(data.label.size());
    for (int32_t i = 0; i < n; ++i) {
      data.label.push_back(i == 0 ? model.first_label(rng)
                                  : model.next_label(data.label.back(), rng));
      model.attributes(data.label.back(), o.active, rng, taken, obs.index);
      obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
      if (i == 0) continue;
      data.factor_vars.insert(data.factor_vars.end(), {first + i - 1, first + i});
      data.factor_var_ptr.push_back(static_cast<LocalIndex>(data.factor_vars.size()));
    }
    data.var_offset.push_back(first + n);
    data.factor_offset.push_back(data.num_factors());
  }
  data.obs_offset = data.var_offset;  // one observation row per token
  data.labelled = true;
  data.file_examples = o.sentences;
  data.var_types = {true, {0}, {o.attributes}, std::vector<int32_t>(tokens, 0), {}};
  data.var_types.obs_row.resize(static_cast<size_t>(tokens));
  std::iota(data.var_types.obs_row.begin(), data.var_types.obs_row.end(), LocalIndex{0});
  data.factor_types = {
      true, {int64_t{o.attributes} * o.labels}, {0}, std::vector<int32_t>(edges, 0), {}};
  data.rebuild_offsets("pdsp gen chain");
  return data;
}

}  // namespace pdsp
