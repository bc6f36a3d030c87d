#pragma once
// Large sparse linear-chain data in format 2 (`pdsp gen chain`): sentences of tokens, each token
// a variable with `labels` states that observes `active` distinct binary attributes out of
// `attributes`, consecutive tokens joined by a pairwise factor. It is exactly the model CRFsuite
// trains with feature.possible_states=1 and feature.possible_transitions=1: a weight for every
// (attribute, label) pair and one label x label transition table, nothing else (no bias and no
// start or end transitions: CRFsuite has none unless the attributes hold one, and these do not;
// the most frequent attribute, on most tokens, plays that part). The parameter count scales with
// `attributes` as the graph's size scales with `sentences`.
//
// Parameter layout, A attributes and L labels (format 2's typed blocks, state-major):
//   theta[y * A + j]          attribute j's weight for label y      (variable type 0, dim A)
//   theta[A * L + s * L + t]  transition from label s to label t    (factor type 0, dim 0,
//                             the one table every edge of every sentence reads)
// num_params = A * L + L * L.
//
// The data are drawn from a hidden chain model, the same for a training and a test file (it
// comes from model_seed): the first label from a random distribution, each next label from a
// random sparse-ish transition matrix (a few preferred successors per label and some mass on
// every label); a token's attributes from a mixture of two laws. Half the draws take the Zipf law
// over attribute ranks as it is (attribute j has rank j, P(j) proportional to (j + 1)^-zipf);
// half take it and then move the drawn rank to the token's label's own attribute in its group:
// each frequency band of ranks [2^k - 1, 2^(k+1) - 1) at least L wide is shuffled and cut into
// groups of L, label y owning the y-th of each group. So every label prefers its own attributes,
// each about as frequent as the Zipf law makes its rank, while the 2L or so most frequent
// attributes (bands narrower than L) follow the Zipf law exactly and say nothing of the label,
// like function words. A CRF learns it well above chance, not perfectly.
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

struct ChainOptions {
  int sentences = 1000;
  int attributes = 10000;   // A
  int labels = 22;          // L
  int active = 20;          // distinct attributes per token
  double zipf = 1.0;        // the exponent s of the attributes' Zipf law (0: uniform)
  uint64_t seed = 1;        // draws the sentences
  uint64_t model_seed = 1;  // draws the hidden model: a test file keeps the training file's
};

// Sentence lengths: a log-normal of mean about 24 tokens and standard deviation about 12 (English
// newswire), rounded and kept in [1, kMaxSentenceLength].
inline constexpr int kMaxSentenceLength = 200;

// A * L + L * L, in 64 bits (check_chain_options refuses 2^31 and more).
int64_t chain_num_params(const ChainOptions& options);

// Throws an InputError naming the flag when the options cannot be generated: fewer than 1
// sentence, attribute or active attribute, fewer than 2 labels, more active attributes than
// attributes, an exponent that is negative or not finite, 2^31 or more parameters, or a file with
// 2^31 or more observation entries, states or table entries (the generator holds the file as one
// slice, whose positions are 32-bit). Draws the sentence lengths to count them: a fraction of a
// second even for millions of sentences. generate_chain calls it.
void check_chain_options(const ChainOptions& options);

// The length of every sentence generate_chain draws with these options.
std::vector<int32_t> chain_sentence_lengths(const ChainOptions& options);

// The data set as write_dataset writes it. Its feature-row pointers are left empty, as a format-2
// file leaves them out: the reader fills in one empty row per state and per table entry (4 bytes
// each: 4 GB for the 5e7-parameter example of datasets/README.md), which training in memory
// needs; so write the data set and read it back to train on it.
Dataset generate_chain(const ChainOptions& options);

}  // namespace pdsp
