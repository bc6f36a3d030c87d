#pragma once
// The model file: /theta float64 [d] and one root attribute per hyper-parameter.
#include <string>
#include <utility>
#include <vector>

namespace pdsp {

inline constexpr const char* kModelFormat = "pdsp-model";
inline constexpr int64_t kModelFormatVersion = 1;

struct ModelFile {
  std::vector<double> theta;
  double epsilon = 1.0;
  std::string counting = "uniform";
  std::string inference;  // "lbp" / "mean-field" for the likelihood baselines, else empty
};

// Attributes whose text parses as a number are stored as float64, the rest as strings.
void write_model(const std::string& path, const std::vector<double>& theta,
                 const std::vector<std::pair<std::string, std::string>>& attributes);
ModelFile read_model(const std::string& path);

}  // namespace pdsp
