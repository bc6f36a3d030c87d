#pragma once
// The ways of choosing counting numbers, by the names flags and model files spell them.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace pdsp {

enum class CountingMode { Auto, File, Uniform, Bethe, TreeReweighted };

inline constexpr std::array kCountingModes = {CountingMode::Auto, CountingMode::File,
                                              CountingMode::Uniform, CountingMode::Bethe,
                                              CountingMode::TreeReweighted};

inline constexpr const char* kCountingModeNames = "auto, file, uniform, bethe, trw";

// The mode called `name`, or nothing when no mode is.
inline std::optional<CountingMode> counting_mode_named(std::string_view name) {
  if (name == "auto") return CountingMode::Auto;
  if (name == "file") return CountingMode::File;
  if (name == "uniform") return CountingMode::Uniform;
  if (name == "bethe") return CountingMode::Bethe;
  if (name == "trw") return CountingMode::TreeReweighted;
  return std::nullopt;
}

inline std::string counting_mode_name(CountingMode mode) {
  switch (mode) {
    case CountingMode::Auto:
      return "auto";
    case CountingMode::File:
      return "file";
    case CountingMode::Uniform:
      return "uniform";
    case CountingMode::Bethe:
      return "bethe";
    case CountingMode::TreeReweighted:
      return "trw";
  }
  return "unknown";
}

}  // namespace pdsp
