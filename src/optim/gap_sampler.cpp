#include "pdsp/optim/gap_sampler.hpp"

#include <algorithm>

namespace pdsp {
namespace {

size_t lowest_bit(size_t i) {
  return i & (~i + 1);
}

}  // namespace

GapSampler::GapSampler(const std::vector<double>& weights)
    : weight_(weights.size(), 0.0), tree_(weights.size() + 1, 0.0) {
  for (size_t i = 0; i < weights.size(); ++i) set(i, weights[i]);
}

void GapSampler::add(size_t i, double change) {
  for (++i; i < tree_.size(); i += lowest_bit(i)) tree_[i] += change;
}

void GapSampler::set(size_t i, double weight) {
  weight = std::max(weight, 0.0);
  add(i, weight - weight_[i]);
  weight_[i] = weight;
}

double GapSampler::total() const {
  double sum = 0;
  for (size_t i = tree_.size() - 1; i > 0; i -= lowest_bit(i)) sum += tree_[i];
  return sum;
}

size_t GapSampler::draw(std::mt19937_64& rng) const {
  const size_t n = weight_.size();
  const double total_weight = total();
  if (!(total_weight > 0)) return static_cast<size_t>(rng() % n);
  double target = std::uniform_real_distribution<double>(0.0, total_weight)(rng);
  // Descend the tree: the largest prefix whose sum is at most target.
  size_t position = 0, bit = 1;
  while (bit * 2 <= n) bit *= 2;
  for (; bit > 0; bit /= 2)
    if (position + bit <= n && tree_[position + bit] <= target) {
      position += bit;
      target -= tree_[position];
    }
  // Round-off in the partial sums can carry the descent past the last index or onto a weight
  // of 0: step back to the nearest index with weight.
  position = std::min(position, n - 1);
  for (size_t back = position + 1; back-- > 0;)
    if (weight_[back] > 0) return back;
  while (weight_[position] == 0) ++position;
  return position;
}

}  // namespace pdsp
