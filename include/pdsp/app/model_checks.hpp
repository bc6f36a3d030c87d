#pragma once
// The names a model file gives that only the layers above data/ know: its function classes and
// its likelihood baseline's inference. predict and info check them the same way.
#include <string>

#include "pdsp/data/model_file.hpp"

namespace pdsp {

// InputError naming `path` and the attribute when a name is not one pdsp knows.
void check_model_names(const ModelFile& model, const std::string& path);

}  // namespace pdsp
