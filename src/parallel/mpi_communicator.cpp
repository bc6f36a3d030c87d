#include "pdsp/parallel/mpi_communicator.hpp"

#include <algorithm>
#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/collectives/gather.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace pdsp {
namespace {

// The combined buffer is [sums..., maxima..., number of maxima]; the trailing count tells the
// operator where the sums end, so one MPI_Allreduce carries both kinds of value. The buffer is
// sent as ONE element of a contiguous datatype: MPI may cut a long message into segments and
// apply the operator to each, but it never cuts an element, so the layout stays intact.
void sum_then_max(void* in, void* inout, int* count, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const int n = bytes / static_cast<int>(sizeof(double));
  for (int element = 0; element < *count; ++element) {
    const double* a = static_cast<const double*>(in) + element * n;
    double* b = static_cast<double*>(inout) + element * n;
    const int maxima = static_cast<int>(b[n - 1]);
    const int sums = n - 1 - maxima;
    for (int i = 0; i < sums; ++i) b[i] += a[i];
    // A NaN counts as the largest value, so that every rank gets the same maximum whatever the
    // order of the reduction (std::max keeps or drops a NaN depending on its argument order).
    for (int i = sums; i < n - 1; ++i) b[i] = (a[i] > b[i] || std::isnan(a[i])) ? a[i] : b[i];
  }
}

// MPI counts are ints: longer arrays are reduced in pieces.
constexpr size_t kMaxChunk = size_t{1} << 28;

}  // namespace

MpiCommunicator::MpiCommunicator(int* argc, char*** argv) {
  int provided = 0;
  // Only the main thread calls MPI; OpenMP threads never do.
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Op_create(&sum_then_max, /*commute=*/1, &sum_then_max_);
}

MpiCommunicator::~MpiCommunicator() {
  if (buffer_type_size_ != 0) MPI_Type_free(&buffer_type_);
  MPI_Op_free(&sum_then_max_);
  MPI_Finalize();
}

void MpiCommunicator::allreduce(std::span<double> sums, std::span<double> maxima) {
  if (size_ == 1) return;
  if (maxima.empty()) {
    for (size_t done = 0; done < sums.size(); done += kMaxChunk)
      MPI_Allreduce(MPI_IN_PLACE, sums.data() + done,
                    static_cast<int>(std::min(kMaxChunk, sums.size() - done)), MPI_DOUBLE, MPI_SUM,
                    MPI_COMM_WORLD);
    return;
  }
  buffer_.resize(sums.size() + maxima.size() + 1);
  std::copy(sums.begin(), sums.end(), buffer_.begin());
  std::copy(maxima.begin(), maxima.end(), buffer_.begin() + static_cast<ptrdiff_t>(sums.size()));
  buffer_.back() = static_cast<double>(maxima.size());
  if (buffer_type_size_ != buffer_.size()) {
    if (buffer_type_size_ != 0) MPI_Type_free(&buffer_type_);
    MPI_Type_contiguous(static_cast<int>(buffer_.size()), MPI_DOUBLE, &buffer_type_);
    MPI_Type_commit(&buffer_type_);
    buffer_type_size_ = buffer_.size();
  }
  MPI_Allreduce(MPI_IN_PLACE, buffer_.data(), 1, buffer_type_, sum_then_max_, MPI_COMM_WORLD);
  std::copy(buffer_.begin(), buffer_.begin() + static_cast<ptrdiff_t>(sums.size()), sums.begin());
  std::copy(buffer_.begin() + static_cast<ptrdiff_t>(sums.size()), buffer_.end() - 1,
            maxima.begin());
}

void MpiCommunicator::allreduce_sum(std::span<int64_t> values) {
  if (size_ == 1) return;
  for (size_t done = 0; done < values.size(); done += kMaxChunk)
    MPI_Allreduce(MPI_IN_PLACE, values.data() + done,
                  static_cast<int>(std::min(kMaxChunk, values.size() - done)), MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
}

namespace {
// Boost.MPI's view of the world communicator: attached, so MPI stays owned by this class.
boost::mpi::communicator world() {
  return boost::mpi::communicator(MPI_COMM_WORLD, boost::mpi::comm_attach);
}
}  // namespace

void MpiCommunicator::broadcast_from_root(std::string& bytes) {
  if (size_ == 1) return;
  boost::mpi::broadcast(world(), bytes, 0);
}

std::vector<std::string> MpiCommunicator::gather_to_root(const std::string& text) {
  std::vector<std::string> all;
  if (size_ == 1) return {text};
  boost::mpi::gather(world(), text, all, 0);
  return all;
}

std::string MpiCommunicator::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  // Open MPI adds its package, repository and date on the same line: the first field names it.
  const size_t end = version.find_first_of(",\n");
  return end == std::string::npos ? version : version.substr(0, end);
}

void MpiCommunicator::start_exchange(std::span<const int> peers,
                                     std::span<const std::span<const double>> send,
                                     std::span<const std::span<double>> recv) {
  // A tag of its own keeps these apart from Boost.MPI's messages; between two ranks, messages
  // with one tag arrive in the order they were sent, and each exchange finishes before the next.
  constexpr int kHaloTag = 15;
  const auto count = [](size_t size) {
    if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
      throw std::length_error("a halo exchange of more than 2^31 values");
    return static_cast<int>(size);
  };
  requests_.assign(2 * peers.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < peers.size(); ++i)
    MPI_Irecv(recv[i].data(), count(recv[i].size()), MPI_DOUBLE, peers[i], kHaloTag, MPI_COMM_WORLD,
              &requests_[i]);
  for (size_t i = 0; i < peers.size(); ++i)
    MPI_Isend(send[i].data(), count(send[i].size()), MPI_DOUBLE, peers[i], kHaloTag, MPI_COMM_WORLD,
              &requests_[peers.size() + i]);
}

void MpiCommunicator::finish_exchange() {
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  requests_.clear();
}

void MpiCommunicator::barrier() {
  MPI_Barrier(MPI_COMM_WORLD);
}

void MpiCommunicator::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace pdsp
