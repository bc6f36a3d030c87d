// Domke's synthetic denoising (gen/domke.hpp): the blur keeps a constant image constant and sums
// a point to one; the labels of the paper's 100x100 images at blur 10 form smooth blobs of both
// classes; every observation lies in the interval its labels select, beside a constant 1; the
// file round-trips through the format-2 reader; bad options are one-line errors.
#include <gtest/gtest.h>

#include <numeric>

#include "pdsp/data/dataset_io.hpp"
#include "pdsp/gen/domke.hpp"
#include "pdsp/util/errors.hpp"
#include "support/dataset_files.hpp"

namespace pdsp {
namespace {

DomkeOptions small_images(int height, int width, int images, double blur) {
  DomkeOptions options;
  options.height = height;
  options.width = width;
  options.images = images;
  options.blur = blur;
  return options;
}

TEST(DomkeData, TheBlurKeepsConstantsAndSumsAPointToOne) {
  const int height = 40, width = 41;
  const std::vector<double> constant(static_cast<size_t>(height * width), 0.37);
  for (double x : gaussian_blur(constant, height, width, 4.0)) EXPECT_NEAR(x, 0.37, 1e-14);
  // A point two cut-offs (2 x 8 pixels at blur 2) from every border spreads into the Gaussian
  // itself: weights summing to one, symmetric, largest at the point.
  const int row = 20, col = 19;
  std::vector<double> point(constant.size(), 0.0);
  point[static_cast<size_t>(row * width + col)] = 1.0;
  const std::vector<double> spread = gaussian_blur(point, height, width, 2.0);
  EXPECT_NEAR(std::accumulate(spread.begin(), spread.end(), 0.0), 1.0, 1e-12);
  EXPECT_NEAR(spread[row * width + col - 2], spread[row * width + col + 2], 1e-15);
  EXPECT_NEAR(spread[(row - 3) * width + col], spread[(row + 3) * width + col], 1e-15);
  EXPECT_EQ(std::max_element(spread.begin(), spread.end()) - spread.begin(), row * width + col);
}

TEST(DomkeData, ThePapersImagesHoldSmoothBlobsOfBothClasses) {
  const DomkeOptions options;  // 16 images of 100x100 at blur 10
  const Dataset data = generate_domke(options);
  ASSERT_EQ(data.num_examples(), 16);
  EXPECT_EQ(data.num_vars(), 16 * 100 * 100);
  EXPECT_EQ(data.num_factors(), 16 * 2 * 100 * 99);
  EXPECT_EQ(data.num_params, kDomkeParams);
  int64_t ones = 0, disagreeing = 0;
  for (int32_t y : data.label) ones += y;
  for (int64_t a = 0; a < data.num_factors(); ++a)
    disagreeing += data.label[data.factor_vars[2 * a]] != data.label[data.factor_vars[2 * a + 1]];
  const double ones_fraction = static_cast<double>(ones) / static_cast<double>(data.num_vars());
  EXPECT_GT(ones_fraction, 0.2);
  EXPECT_LT(ones_fraction, 0.8);
  // Blobs about 10 pixels across: a few percent of the edges cross a boundary.
  const double crossing =
      static_cast<double>(disagreeing) / static_cast<double>(data.num_factors());
  EXPECT_GT(crossing, 0.005);
  EXPECT_LT(crossing, 0.08);
}

TEST(DomkeData, ObservationsLieInTheIntervalsTheirLabelsSelect) {
  const Dataset data = generate_domke(small_images(12, 9, 5, 2.0));
  const ObservationRows& obs = data.observations;
  const auto row_values = [&](LocalIndex row) {
    EXPECT_EQ(obs.ptr[row + 1] - obs.ptr[row], 2);
    EXPECT_EQ(obs.index[obs.ptr[row]], 0);
    EXPECT_EQ(obs.index[obs.ptr[row] + 1], 1);
    EXPECT_EQ(obs.value[obs.ptr[row] + 1], 1.0);
    return obs.value[obs.ptr[row]];
  };
  for (int64_t v = 0; v < data.num_vars(); ++v) {
    const double x = row_values(data.var_types.obs_row[v]);
    EXPECT_GE(x, data.label[v] == 0 ? 0.0 : 0.1) << "pixel " << v;
    EXPECT_LE(x, data.label[v] == 0 ? 0.9 : 1.0) << "pixel " << v;
  }
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    const bool equal =
        data.label[data.factor_vars[2 * a]] == data.label[data.factor_vars[2 * a + 1]];
    const double x = row_values(data.factor_types.obs_row[a]);
    EXPECT_GE(x, equal ? 0.0 : 0.2) << "edge " << a;
    EXPECT_LE(x, equal ? 0.8 : 1.0) << "edge " << a;
  }
  // One type of each kind, dim 2: 2 x 2 unary and 4 x 2 pairwise parameters.
  EXPECT_EQ(data.var_types.param_offset, std::vector<int64_t>{0});
  EXPECT_EQ(data.factor_types.param_offset, std::vector<int64_t>{4});
  EXPECT_EQ(data.var_types.dim, std::vector<int32_t>{2});
  EXPECT_EQ(data.factor_types.dim, std::vector<int32_t>{2});
}

TEST(DomkeData, TheFileRoundTripsThroughTheFormatTwoReader) {
  testing::files::TempDir dir;
  const Dataset data = generate_domke(small_images(7, 6, 3, 1.5));
  write_dataset(dir.file("domke.h5"), data);
  const Dataset back = read_dataset(dir.file("domke.h5"));
  EXPECT_EQ(back.label, data.label);
  EXPECT_EQ(back.factor_vars, data.factor_vars);
  EXPECT_EQ(back.observations.value, data.observations.value);
  EXPECT_EQ(back.var_types.obs_row, data.var_types.obs_row);
  EXPECT_EQ(back.factor_types.obs_row, data.factor_types.obs_row);
  EXPECT_EQ(back.obs_offset, data.obs_offset);
}

TEST(DomkeData, BadOptionsAreOneLineErrors) {
  DomkeOptions options;
  options.blur = -1;
  EXPECT_THROW(generate_domke(options), InputError);
  options = {};
  options.images = 0;
  EXPECT_THROW(generate_domke(options), InputError);
  options = {};
  options.height = 0;
  EXPECT_THROW(generate_domke(options), InputError);
}

}  // namespace
}  // namespace pdsp
