#include <omp.h>

#include "pdsp/app/commands.hpp"

namespace pdsp {

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = {
      {"train", "learn a model by primal-dual message passing", run_train},
      {"predict", "predict labels and marginals with a model", run_predict},
      {"info", "validate a data set, or show a model's, prediction's or checkpoint's provenance",
       run_info},
      {"gen denoise", "generate binary image-denoising data", run_gen_denoise},
      {"gen domke", "generate Domke's (NIPS 2013) synthetic denoising data", run_gen_domke},
      {"gen chain", "generate large sparse linear-chain data (CRFsuite's model)", run_gen_chain},
  };
  return table;
}

void use_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

}  // namespace pdsp
