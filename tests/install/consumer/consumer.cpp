// Uses an installed pdsp through its public headers: builds a small data set, writes it, reads it
// back with the collective reader (MPI), checks that the round trip kept every array (the data
// set's fingerprint, an OpenMP checksum) and prints the log-partition function of the model read
// back at a fixed theta. tests/install/install_test.sh checks the printed line.
#include <cstdio>
#include <string>
#include <vector>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/inference/smax.hpp"
#include "pdsp/parallel/mpi_communicator.hpp"

namespace {

// A chain of three binary variables: a feature per state (parameters 0 and 1) and, on each
// edge, a feature that is 1 when both ends agree (parameter 2).
pdsp::Dataset chain() {
  pdsp::DatasetBuilder builder(/*num_params=*/3);
  builder.begin_example();
  const std::vector<pdsp::FeatureRow> state = {{{0, 1.0}}, {{1, 1.0}}};
  const std::vector<pdsp::FeatureRow> agree = {{{2, 1.0}}, {}, {}, {{2, 1.0}}};
  const int64_t a = builder.add_variable(2, 0, state);
  const int64_t b = builder.add_variable(2, 1, state);
  const int64_t c = builder.add_variable(2, 1, state);
  builder.add_factor({a, b}, agree);
  builder.add_factor({b, c}, agree);
  return builder.finish();
}

// theta . features of one row of `rows`.
double row_score(const pdsp::SparseRows& rows, int64_t row, const std::vector<double>& theta) {
  double score = 0.0;
  for (int64_t k = rows.ptr[row]; k < rows.ptr[row + 1]; ++k)
    score += theta[rows.param[k]] * rows.value[k];
  return score;
}

// log sum over every labelling y of exp(theta . features(y)), by enumeration: the soft-max at
// temperature 1 of the labellings' scores.
double log_partition(const pdsp::Dataset& data, const std::vector<double>& theta) {
  const int64_t vars = data.num_vars();
  std::vector<double> scores;
  for (int64_t labelling = 0; labelling < (int64_t{1} << vars); ++labelling) {
    auto state = [&](int64_t v) { return (labelling >> v) & 1; };
    double score = 0.0;
    for (int64_t v = 0; v < vars; ++v)
      score += row_score(data.var_features, data.state_offset[v] + state(v), theta);
    for (int64_t f = 0; f < data.num_factors(); ++f) {
      // Joint state, row-major with the last variable fastest.
      int64_t joint = 0;
      for (int64_t k = data.factor_var_ptr[f]; k < data.factor_var_ptr[f + 1]; ++k)
        joint = joint * data.card[data.factor_vars[k]] + state(data.factor_vars[k]);
      score += row_score(data.factor_features, data.table_offset[f] + joint, theta);
    }
    scores.push_back(score);
  }
  return pdsp::smax(scores.data(), static_cast<int64_t>(scores.size()), 1.0);
}

}  // namespace

int main(int argc, char** argv) {
  pdsp::MpiCommunicator comm(&argc, &argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: pdsp_consumer FILE.h5\n");
    return 2;
  }
  const pdsp::Dataset written = chain();
  pdsp::write_dataset(argv[1], written);

  const pdsp::DatasetLayout layout = pdsp::scan_dataset(argv[1], comm);
  const pdsp::Dataset read = pdsp::read_examples(layout, 0, layout.num_examples());
  if (pdsp::dataset_fingerprint(read, comm) != pdsp::dataset_fingerprint(written, comm)) {
    std::fprintf(stderr, "pdsp_consumer: the data set read back differs from the one written\n");
    return 1;
  }
  std::printf("examples %lld, variables %lld, factors %lld, log-partition %.6f\n",
              static_cast<long long>(layout.num_examples()),
              static_cast<long long>(layout.num_vars()),
              static_cast<long long>(layout.num_factors()), log_partition(read, {0.0, 1.0, 0.5}));
  return 0;
}
