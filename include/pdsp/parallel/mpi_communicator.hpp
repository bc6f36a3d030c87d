#pragma once
// MPI implementation of Communicator. The object owns MPI_Init/MPI_Finalize: main() creates
// exactly one and keeps it alive for the whole run.
#include <mpi.h>

#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(int* argc, char*** argv);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce(std::span<double> sums, std::span<double> maxima) override;
  void allreduce_sum(std::span<int64_t> values) override;
  void broadcast_from_root(std::string& bytes) override;
  std::vector<std::string> gather_to_root(const std::string& text) override;
  void barrier() override;
  void start_exchange(std::span<const int> peers, std::span<const std::span<const double>> send,
                      std::span<const std::span<double>> recv) override;
  void finish_exchange() override;
  std::string library_version() const override;
  [[noreturn]] void abort(int exit_code) override;
  using Communicator::allreduce_sum;

 private:
  int rank_ = 0;
  int size_ = 1;
  MPI_Op sum_then_max_ = MPI_OP_NULL;
  std::vector<double> buffer_;
  MPI_Datatype buffer_type_ = MPI_DATATYPE_NULL;  // one element = the whole combined buffer
  size_t buffer_type_size_ = 0;
  std::vector<MPI_Request> requests_;  // of the exchange under way
};

}  // namespace pdsp
