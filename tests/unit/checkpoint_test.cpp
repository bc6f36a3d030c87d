// Checkpoint files: checksums, round trip, detection of damaged files, choice of the checkpoint
// to resume from, and refusal of other data or other settings.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "pdsp/app/checkpointing.hpp"
#include "pdsp/data/checksum.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("pdsp-ckpt-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

struct Fixture {
  Dataset data = testing::random_dataset({testing::loopy_shape(), testing::tree_shape()}, 6, 3);
  LocalProblem problem{data, {1.0, CountingMode::Uniform, 1.0, true, "tiny"}};
  SerialCommunicator comm;

  Fixture() {
    std::mt19937_64 rng(1);
    std::normal_distribution<double> normal;
    std::vector<double> messages = problem.messages();
    for (double& m : messages) m = normal(rng);
    problem.set_messages(messages);
  }

  Checkpoint checkpoint(int iteration) {
    Checkpoint c;
    c.state.theta = {0.5, -1.25, 3.0, 0.0, 1e-300, -7.5};
    c.state.step = 0.125;
    c.state.previous_objective = 42.5;
    c.state.iterations_done = iteration;
    c.state.seconds_trained = 3.5;
    // Two pairs and a pending step of the L-BFGS memory.
    c.state.lbfgs.s = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
    c.state.lbfgs.y = {0.5, 0.25, 1, 2, 3, 4, 6, 5, 4, 3, 2, 1};
    c.state.lbfgs.step = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    c.state.lbfgs.gradient = {-7, 7, -7, 7, -7, 7};
    // An eps = 0 run: its temperature and two points of the dual bundle.
    c.state.smoothing = 0.01;
    c.state.dual_bundle.moments = {1, 0, 2, 0, 3, 0, 0, 1, 0, 2, 0, 3};
    c.state.dual_bundle.losses = {4.5, 2.25};
    c.state.dual_bundle.weights = {0.25, 0.75};
    c.state.dual_bundle.best = -17.5;
    c.metrics_bytes = 1234;
    c.config_line = "epsilon=1 tol=1e-06";
    c.compatibility = {{"epsilon", "1"}, {"C", "1"}};
    c.data_fingerprint = dataset_fingerprint(data, comm);
    return c;
  }
};

Checkpoint load(const std::string& path, std::vector<double>& messages, Communicator& comm) {
  Checkpoint c = read_checkpoint_header(path, 6, comm);
  read_checkpoint_messages(path, messages, comm);
  return c;
}

// Flips one byte inside the stored values of `dataset` (contiguous layout).
void flip_byte_of(const std::string& path, const std::string& dataset, int64_t byte) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t set = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(set);
  H5Dclose(set);
  H5Fclose(file);
  ASSERT_NE(offset, HADDR_UNDEF);
  std::fstream stream(path, std::ios::in | std::ios::out | std::ios::binary);
  stream.seekg(static_cast<std::streamoff>(offset + static_cast<haddr_t>(byte)));
  char c = 0;
  stream.get(c);
  stream.seekp(static_cast<std::streamoff>(offset + static_cast<haddr_t>(byte)));
  stream.put(static_cast<char>(c ^ 0x10));
}

TEST(Checksum, DoesNotDependOnHowTheArrayIsSplitButOnEveryElementAndPosition) {
  const std::vector<double> values = {1.0, 2.0, 3.0, 4.0, 5.0};
  Checksum whole, split, changed, swapped;
  whole.add<double>(7, 0, values);
  split.add<double>(7, 3, std::span<const double>(values).subspan(3));
  split.add<double>(7, 0, std::span<const double>(values).first(3));
  EXPECT_EQ(whole.value(), split.value());
  std::vector<double> other = values;
  other[2] = std::nextafter(3.0, 4.0);
  changed.add<double>(7, 0, other);
  EXPECT_NE(whole.value(), changed.value());
  other = values;
  std::swap(other[0], other[1]);
  swapped.add<double>(7, 0, other);
  EXPECT_NE(whole.value(), swapped.value());
}

// The values every build since issue 4 computes (and checkpoints and fingerprints store): a
// change of the hash would make existing checkpoints fail verification on resume.
TEST(Checksum, KeepsTheValuesStoredCheckpointsWereWrittenWith) {
  Checksum doubles, ints;
  doubles.add<double>(7, 0, std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0});
  ints.add<int32_t>(11, 100, std::vector<int32_t>{-3, 0, 7});
  EXPECT_EQ(doubles.hex(), "b1aa507b637fb2d8");
  EXPECT_EQ(ints.hex(), "e76c6acf28372f92");
}

// Arrays of more than 2^20 elements are summed by the OpenMP threads.
TEST(Checksum, ThreadedSumOfALargeArrayEqualsTheElementByElementSum) {
  std::vector<double> values((3 << 19) + 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i));
  Checksum threaded, one_by_one;
  threaded.add<double>(9, 40, values);
  for (size_t i = 0; i < values.size(); ++i)
    one_by_one.add_word(9, 40 + static_cast<int64_t>(i), std::bit_cast<uint64_t>(values[i]));
  EXPECT_EQ(threaded.value(), one_by_one.value());
}

TEST(Checkpoint, RoundTripRestoresEveryField) {
  Fixture f;
  TempDir dir;
  const Checkpoint written = f.checkpoint(7);
  const std::vector<double> messages = f.problem.messages();
  write_checkpoint(dir / "c.h5", written, messages, f.comm);
  std::vector<double> read_messages(messages.size(), 0.0);
  const Checkpoint read = load(dir / "c.h5", read_messages, f.comm);
  EXPECT_EQ(read_messages, messages);
  EXPECT_EQ(read.state.theta, written.state.theta);
  EXPECT_EQ(read.state.step, 0.125);
  EXPECT_EQ(read.state.previous_objective, 42.5);
  EXPECT_EQ(read.state.iterations_done, 7);
  EXPECT_EQ(read.state.seconds_trained, 3.5);
  EXPECT_EQ(read.state.lbfgs.s, written.state.lbfgs.s);
  EXPECT_EQ(read.state.lbfgs.y, written.state.lbfgs.y);
  EXPECT_EQ(read.state.lbfgs.step, written.state.lbfgs.step);
  EXPECT_EQ(read.state.lbfgs.gradient, written.state.lbfgs.gradient);
  EXPECT_EQ(read.state.smoothing, 0.01);
  EXPECT_EQ(read.state.dual_bundle.moments, written.state.dual_bundle.moments);
  EXPECT_EQ(read.state.dual_bundle.losses, written.state.dual_bundle.losses);
  EXPECT_EQ(read.state.dual_bundle.weights, written.state.dual_bundle.weights);
  EXPECT_EQ(read.state.dual_bundle.best, -17.5);
  EXPECT_EQ(read.metrics_bytes, 1234);
  EXPECT_EQ(read.config_line, written.config_line);
  EXPECT_EQ(read.compatibility, written.compatibility);
  EXPECT_EQ(read.data_fingerprint, written.data_fingerprint);
  EXPECT_FALSE(fs::exists(dir / "c.h5.tmp." + std::to_string(::getpid())));
}

// A full L-BFGS memory is a ring whose oldest pair may sit in any slot; the file holds the pairs
// oldest first all the same, so that a resumed run finds the same pairs in the same order.
TEST(Checkpoint, AWrappedLbfgsMemoryIsWrittenOldestFirst) {
  Fixture f;
  TempDir dir;
  Checkpoint written = f.checkpoint(7);
  written.state.lbfgs.oldest = 1;  // the second slot holds the oldest pair
  written.state.lbfgs.recompute_curvatures(6);
  write_checkpoint(dir / "c.h5", written, f.problem.messages(), f.comm);
  std::vector<double> messages(static_cast<size_t>(f.problem.num_message_entries()));
  const Checkpoint read = load(dir / "c.h5", messages, f.comm);
  EXPECT_EQ(read.state.lbfgs.oldest, 0);
  EXPECT_EQ(read.state.lbfgs.s, (std::vector<double>{-1, -2, -3, -4, -5, -6, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(read.state.lbfgs.y, (std::vector<double>{6, 5, 4, 3, 2, 1, 0.5, 0.25, 1, 2, 3, 4}));
  std::vector<double> before(6), after(6);
  written.state.lbfgs.direction(written.state.lbfgs.gradient, before);
  read.state.lbfgs.direction(read.state.lbfgs.gradient, after);
  EXPECT_EQ(after, before);
}

// A resume reads the header of every candidate but the large vectors of the chosen one only,
// and its memory into storage for the run's pairs: the trainer's reserve then moves nothing.
TEST(Checkpoint, TheHeaderLeavesThetaAndTheMemoryToTheVectorsRead) {
  Fixture f;
  TempDir dir;
  const Checkpoint written = f.checkpoint(7);
  write_checkpoint(dir / "c.h5", written, f.problem.messages(), f.comm);
  Checkpoint header = read_checkpoint_file_header(dir / "c.h5");
  EXPECT_TRUE(header.state.theta.empty());
  EXPECT_EQ(header.state.lbfgs.pairs(6), 0);
  EXPECT_EQ(header.num_params, 6);
  const int capacity = 5;
  read_checkpoint_vectors(dir / "c.h5", header, capacity);
  EXPECT_EQ(header.state.theta, written.state.theta);
  EXPECT_EQ(header.state.lbfgs.s, written.state.lbfgs.s);
  EXPECT_EQ(header.state.lbfgs.y, written.state.lbfgs.y);
  EXPECT_EQ(header.state.lbfgs.step, written.state.lbfgs.step);
  const double* pairs = header.state.lbfgs.s.data();
  header.state.lbfgs.reserve(6, capacity);
  EXPECT_EQ(header.state.lbfgs.s.data(), pairs);
}

// Files written before the bundle had weights hold a ring of points and no /dual/weights; they
// are read with all weight on the newest point (the ring starts at @dual_next, 0 here).
TEST(Checkpoint, ABundleWithoutWeightsIsReadWithItsNewestPointWeighted) {
  Fixture f;
  TempDir dir;
  Checkpoint written = f.checkpoint(7);
  written.state.dual_bundle.weights.clear();
  write_checkpoint(dir / "c.h5", written, f.problem.messages(), f.comm);
  std::vector<double> messages(static_cast<size_t>(f.problem.num_message_entries()));
  const Checkpoint read = load(dir / "c.h5", messages, f.comm);
  EXPECT_EQ(read.state.dual_bundle.moments, written.state.dual_bundle.moments);
  EXPECT_EQ(read.state.dual_bundle.weights, (std::vector<double>{0.0, 1.0}));
}

class DamagedCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    write_checkpoint(path_, f_.checkpoint(3), f_.problem.messages(), f_.comm);
  }
  std::string load_error() {
    std::vector<double> messages(static_cast<size_t>(f_.problem.num_message_entries()));
    try {
      load(path_, messages, f_.comm);
    } catch (const CollectiveError& error) {
      return error.what();
    }
    return "";
  }
  Fixture f_;
  TempDir dir_;
  std::string path_ = dir_ / "c.h5";
};

TEST_F(DamagedCheckpoint, AFlippedByteInTheMessagesIsDetected) {
  flip_byte_of(path_, "/messages", 13);
  EXPECT_NE(load_error().find("/messages: checksum mismatch"), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, AFlippedByteInThetaIsDetected) {
  flip_byte_of(path_, "/theta", 9);
  EXPECT_NE(load_error().find("/theta: checksum mismatch"), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, AFlippedByteInTheLbfgsMemoryIsDetected) {
  flip_byte_of(path_, "/lbfgs/y", 13);
  EXPECT_NE(load_error().find("/lbfgs: checksum mismatch"), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, AFlippedByteInTheDualBundleIsDetected) {
  flip_byte_of(path_, "/dual/moments", 13);
  EXPECT_NE(load_error().find("header checksum mismatch"), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, AFlippedByteInTheBundleWeightsIsDetected) {
  flip_byte_of(path_, "/dual/weights", 1);
  EXPECT_NE(load_error().find("header checksum mismatch"), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, AChangedHeaderFieldIsDetected) {
  hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const int64_t iteration = 1048605;
  hid_t attribute = H5Aopen(file, "iteration", H5P_DEFAULT);
  H5Awrite(attribute, H5T_NATIVE_INT64, &iteration);
  H5Aclose(attribute);
  H5Fclose(file);
  EXPECT_NE(load_error().find("header checksum mismatch"), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, ATruncatedFileIsDetected) {
  fs::resize_file(path_, fs::file_size(path_) / 2);
  EXPECT_NE(load_error().find(path_), std::string::npos) << load_error();
}

TEST_F(DamagedCheckpoint, AnUnknownVersionIsDetected) {
  hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const int64_t version = kCheckpointFormatVersion + 1;
  hid_t attribute = H5Aopen(file, "format_version", H5P_DEFAULT);
  H5Awrite(attribute, H5T_NATIVE_INT64, &version);
  H5Aclose(attribute);
  H5Fclose(file);
  EXPECT_NE(load_error().find("unknown checkpoint version " + std::to_string(version)),
            std::string::npos)
      << load_error();
}

TEST(CheckpointStore, PublishesLatestAndKeepsTheNewest) {
  TempDir dir;
  CheckpointStore store(dir.str(), 2);
  for (int iteration : {1, 2, 3}) {
    std::ofstream(store.path_for(iteration)) << "x";
    store.publish(store.path_for(iteration));
  }
  EXPECT_FALSE(fs::exists(store.path_for(1)));
  EXPECT_EQ(store.candidates(), (std::vector<std::string>{store.path_for(3), store.path_for(2)}));
  // A later iteration that is not this run's is never removed for the one just published.
  std::ofstream(store.path_for(9)) << "x";
  std::ofstream(store.path_for(4)) << "x";
  store.publish(store.path_for(4));
  EXPECT_TRUE(fs::exists(store.path_for(4)));
  EXPECT_TRUE(fs::exists(store.path_for(9)));
  EXPECT_FALSE(fs::exists(store.path_for(2)));
  std::ofstream(dir / "ckpt-000000009.h5.tmp.77") << "partial";
  store.remove_stale_temporaries();
  EXPECT_FALSE(fs::exists(dir / "ckpt-000000009.h5.tmp.77"));
}

class Resume : public ::testing::Test {
 protected:
  void write(int iteration, std::vector<std::pair<std::string, std::string>> settings = {}) {
    const std::string path = CheckpointStore(dir_.str(), 5).path_for(iteration);
    Checkpoint c = f_.checkpoint(iteration);
    if (!settings.empty()) c.compatibility = std::move(settings);
    write_checkpoint(path, c, f_.problem.messages(), f_.comm);
    CheckpointStore(dir_.str(), 5).publish(path);
  }
  CheckpointOptions auto_options() {
    CheckpointOptions options;
    options.directory = dir_.str();
    options.keep = 5;
    options.resume = "auto";
    return options;
  }
  // What resuming as `now` is refused with ("" when it resumes).
  std::string refusal(const Checkpoint& now) {
    try {
      resume_training(auto_options(), now, f_.problem, f_.comm);
    } catch (const CollectiveError& error) {
      return error.what();
    }
    return "";
  }
  Fixture f_;
  TempDir dir_;
};

TEST_F(Resume, SkipsADamagedNewestCheckpointForThePreviousOne) {
  write(4);
  write(8);
  flip_byte_of(CheckpointStore(dir_.str(), 5).path_for(8), "/messages", 0);
  CheckpointView view = look_at_checkpoints(auto_options());
  ASSERT_EQ(view.headers.size(), 2u);
  const auto loaded = resume_training(auto_options(), view, f_.checkpoint(0), f_.problem, f_.comm);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->state.iterations_done, 4);
  EXPECT_EQ(loaded->state.lbfgs.s, f_.checkpoint(4).state.lbfgs.s);
  EXPECT_TRUE(view.headers.empty()) << "the candidates' headers (theta, L-BFGS) are released";
}

TEST_F(Resume, FailsClearlyWhenNoCheckpointIsValid) {
  write(4);
  flip_byte_of(CheckpointStore(dir_.str(), 5).path_for(4), "/theta", 0);
  EXPECT_THROW(resume_training(auto_options(), f_.checkpoint(0), f_.problem, f_.comm),
               CollectiveError);
}

TEST_F(Resume, StartsAfreshInAnEmptyDirectory) {
  EXPECT_FALSE(resume_training(auto_options(), f_.checkpoint(0), f_.problem, f_.comm).has_value());
}

TEST_F(Resume, RefusesOtherSettingsAndNamesTheField) {
  write(4);
  Checkpoint now = f_.checkpoint(0);
  now.compatibility = {{"epsilon", "0.5"}, {"C", "1"}};
  const std::string why = refusal(now);
  EXPECT_NE(why.find("epsilon was 1 in the checkpoint and is 0.5 now"), std::string::npos)
      << "resumed with another epsilon, or refused so: " << why;
}

// A latent run checkpointed before --completion-epsilon existed completed at epsilon: resumed
// with the new default it is refused, with the old temperature given it resumes.
TEST_F(Resume, ALatentCheckpointFromBeforeTheCompletionTemperatureCompletedAtEpsilon) {
  write(4, {{"epsilon", "1"}, {"C", "1"}, {"inner_iters", "100"}});
  Checkpoint now = f_.checkpoint(0);
  now.compatibility = {
      {"epsilon", "1"}, {"C", "1"}, {"inner_iters", "100"}, {"completion_epsilon", "0"}};
  const std::string why = refusal(now);
  EXPECT_NE(why.find("completion_epsilon was 1 in the checkpoint and is 0"), std::string::npos)
      << "resumed at another completion temperature, or refused so: " << why;
  now.compatibility.back().second = "1";
  EXPECT_TRUE(resume_training(auto_options(), now, f_.problem, f_.comm).has_value());
}

// An mlp run checkpointed before --network-inputs existed read raw rows: resumed with the new
// default (standardized) it is refused, with raw it resumes.
TEST_F(Resume, ANetworkCheckpointFromBeforeStandardizedInputsReadRawRows) {
  write(4, {{"epsilon", "1"}, {"unary_model", "mlp"}, {"hidden", "16"}});
  Checkpoint now = f_.checkpoint(0);
  now.compatibility = {{"epsilon", "1"},
                       {"unary_model", "mlp"},
                       {"hidden", "16"},
                       {"network_inputs", "standardized"}};
  const std::string why = refusal(now);
  EXPECT_NE(why.find("network_inputs was raw in the checkpoint and is standardized now"),
            std::string::npos)
      << "resumed raw weights as standardized ones, or refused so: " << why;
  now.compatibility.back().second = "raw";
  EXPECT_TRUE(resume_training(auto_options(), now, f_.problem, f_.comm).has_value());
}

TEST_F(Resume, RefusesOtherTrainingData) {
  write(4);
  Checkpoint now = f_.checkpoint(0);
  Dataset other = f_.data;
  other.var_features.value[0] += 1.0;
  now.data_fingerprint = dataset_fingerprint(other, f_.comm);
  const std::string why = refusal(now);
  EXPECT_NE(why.find("other training data"), std::string::npos)
      << "resumed on other data, or refused so: " << why;
}

TEST_F(Resume, RefusesToStartAfreshOverAnEarlierRunsCheckpoints) {
  write(4);
  CheckpointOptions options = auto_options();
  options.resume = "";
  EXPECT_THROW(resume_training(options, f_.checkpoint(0), f_.problem, f_.comm), CollectiveError);
}

}  // namespace
}  // namespace pdsp
