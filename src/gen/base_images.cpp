// The four built-in base images. Each is drawn in normalised coordinates, so any H x W works;
// they differ in kind (a convex blob, thin strokes, sharp corners, nested curves) so that the
// per-image errors say something about what the edge weights must learn.
#include <cmath>
#include <stdexcept>

#include "pdsp/gen/denoise.hpp"

namespace pdsp {
namespace {

bool disk(double x, double y) {
  return std::hypot(x - 0.5, y - 0.5) < 0.3;
}

bool cross_and_bars(double x, double y) {
  const bool cross = (std::abs(x - 0.5) < 0.08 && y > 0.15 && y < 0.85) ||
                     (std::abs(y - 0.5) < 0.08 && x > 0.15 && x < 0.85);
  const bool bars = y > 0.05 && y < 0.12 && (static_cast<int>(x * 10) % 2 == 0);
  return cross || bars;
}

bool triangle_and_square(double x, double y) {
  const bool triangle = y > 0.1 && y < 0.6 && std::abs(x - 0.35) < (y - 0.1) * 0.5;
  const bool square = x > 0.6 && x < 0.9 && y > 0.55 && y < 0.85;
  return triangle || square;
}

bool rings(double x, double y) {
  const double r = std::hypot(x - 0.45, y - 0.5);
  const bool ring = (r > 0.32 && r < 0.4) || (r > 0.14 && r < 0.2);
  const bool dot = std::hypot(x - 0.85, y - 0.15) < 0.07;
  return ring || dot;
}

}  // namespace

std::vector<int32_t> base_image(int index, int height, int width) {
  if (index < 1 || index > kNumBaseImages)
    throw std::invalid_argument("base image index must be 1.." + std::to_string(kNumBaseImages));
  std::vector<int32_t> pixels(static_cast<size_t>(height) * width);
  for (int i = 0; i < height; ++i)
    for (int j = 0; j < width; ++j) {
      const double y = (i + 0.5) / height, x = (j + 0.5) / width;
      bool on = false;
      switch (index) {
        case 1:
          on = disk(x, y);
          break;
        case 2:
          on = cross_and_bars(x, y);
          break;
        case 3:
          on = triangle_and_square(x, y);
          break;
        default:
          on = rings(x, y);
          break;
      }
      pixels[static_cast<size_t>(i) * width + j] = on ? 1 : 0;
    }
  return pixels;
}

}  // namespace pdsp
