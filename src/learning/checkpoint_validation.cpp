#include "pdsp/learning/checkpoint_validation.hpp"

#include <vector>

#include "pdsp/data/checksum.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

constexpr uint64_t kBestThetaTag = 113;  // checkpoint.cpp's tags end at 112
constexpr uint64_t kBookkeepingTag = 114;

std::vector<double> bookkeeping(const ValidationProgress& progress) {
  return {static_cast<double>(progress.best_iteration), progress.best_error,
          static_cast<double>(progress.checks), static_cast<double>(progress.stale_checks)};
}

}  // namespace

std::string validation_checksum(const ValidationProgress& progress) {
  if (progress.checks == 0) return "";
  Checksum sum;
  sum.add<double>(kBestThetaTag, 0, progress.best_theta);
  sum.add<double>(kBookkeepingTag, 0, bookkeeping(progress));
  return sum.hex();
}

void write_validation(h5::File& file, const ValidationProgress& progress) {
  if (progress.checks == 0) return;
  file.write("/validation/best_theta", progress.best_theta);
  file.write("/validation/bookkeeping", bookkeeping(progress));
  file.write_attribute("checksum_validation", validation_checksum(progress));
}

void read_validation(const h5::File& file, const std::string& path, int64_t params,
                     ValidationProgress& progress) {
  if (!file.has_attribute("checksum_validation")) return;
  if (file.length("/validation/best_theta") != params ||
      file.length("/validation/bookkeeping") != 4)
    throw_file_error(
        path, "/validation/best_theta",
        "does not hold " + std::to_string(params) + " parameters and 4 numbers of bookkeeping");
  progress.best_theta = file.read<double>("/validation/best_theta", 0, params);
  const std::vector<double> numbers = file.read<double>("/validation/bookkeeping", 0, 4);
  progress.best_iteration = static_cast<int>(numbers[0]);
  progress.best_error = numbers[1];
  progress.checks = static_cast<int>(numbers[2]);
  progress.stale_checks = static_cast<int>(numbers[3]);
  if (validation_checksum(progress) != file.read_string_attribute("checksum_validation"))
    throw_file_error(path, "/validation", "checksum mismatch (the file is corrupt)");
}

}  // namespace pdsp
