#pragma once
// Non-local energies of an example (Vilnis, Belanger, Sheldon and McCallum, AISTATS 2015): terms
// on the variables' marginals mu of a whole example rather than on a few variables, weighted by
// psi >= 0 (model parameters, laid out as [count templates | psi_u | psi_w]). Every variable of
// an example with terms has num_states states. U(mu)_s = sum over the example's variables of
// mu_v(s), the expected number of variables in state s.
// - Count templates j, each instance: psi_j h_j(a_j . U(mu) + b_j), with h_j a loss shape of the
//   violation z (z > 0: violated).
// - Dictionary, unigram (L^u): psi_u min over words i of |u_i - U(mu)|_1, u_i word i's counts of
//   each state.
// - Dictionary, per position (L^w): psi_w min over the words i of the example's length of
//   |w_i - mu|_1, w_i word i as one-hot rows, one per position.
#include <cstdint>
#include <vector>

namespace pdsp {

enum class CountShape : int32_t {
  SmoothedHinge = 0,  // 0 (z <= 0), z^2 / 2 (0 < z < 1), z - 1/2 (z >= 1)
  Squared = 1,        // z^2 / 2: a soft equality
  Linear = 2,         // z
};

struct NonlocalTerms {
  int32_t num_states = 0;
  std::vector<double> count_a;           // [templates x num_states]
  std::vector<double> count_b;           // [templates]
  std::vector<CountShape> count_shape;   // [templates]
  std::vector<int64_t> count_offset{0};  // [examples + 1] into count_template
  std::vector<int32_t> count_template;   // [instances] the template of each
  std::vector<int64_t> word_ptr{0};      // [words + 1] into word_state
  std::vector<int32_t> word_state;       // each word's states, position by position
  bool unigram = false;                  // L^u on
  bool position = false;                 // L^w on

  int64_t num_templates() const { return static_cast<int64_t>(count_b.size()); }
  int64_t num_words() const { return static_cast<int64_t>(word_ptr.size()) - 1; }
  // psi's length: the templates' weights, then psi_u and psi_w.
  int64_t num_weights() const { return num_templates() + 2; }
  // Whether `other`'s psi means the same terms: the same states, templates and dictionary (the
  // examples' instances may differ).
  bool same_weights_as(const NonlocalTerms& other) const {
    return num_states == other.num_states && count_a == other.count_a && count_b == other.count_b &&
           count_shape == other.count_shape && word_ptr == other.word_ptr &&
           word_state == other.word_state && unigram == other.unigram && position == other.position;
  }
};

}  // namespace pdsp
