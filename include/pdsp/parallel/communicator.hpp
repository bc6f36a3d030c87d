#pragma once
// The only door to the network. The math calls these collectives and never MPI itself, so a
// serial run (tests, `pdsp info`) uses the no-op implementation below.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pdsp {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // One in-place reduction: `sums` are added over ranks and `maxima` take the largest value.
  virtual void allreduce(std::span<double> sums, std::span<double> maxima) = 0;
  virtual void allreduce_sum(std::span<int64_t> values) = 0;
  // Replaces `bytes` on every rank with rank 0's (see share_from_root for structured values).
  virtual void broadcast_from_root(std::string& bytes) = 0;
  // Rank 0 receives every rank's `text` in rank order; the other ranks receive nothing.
  virtual std::vector<std::string> gather_to_root(const std::string& text) = 0;
  virtual void barrier() = 0;
  // Point to point with a few ranks (the neighbours of a shard): starts sending send[i] to
  // peers[i] and receiving recv[i], sized by the caller, from peers[i]; finish_exchange() returns
  // when every buffer has gone and arrived. Only the ranks named take part. One exchange at a
  // time; its buffers stay untouched until it finishes.
  virtual void start_exchange(std::span<const int> peers,
                              std::span<const std::span<const double>> send,
                              std::span<const std::span<double>> recv) = 0;
  virtual void finish_exchange() = 0;
  // The message-passing library this build runs on, e.g. "Open MPI v4.1.4".
  virtual std::string library_version() const = 0;
  // Ends every rank at once; used when one rank finds an error the others cannot see.
  [[noreturn]] virtual void abort(int exit_code) = 0;

  void allreduce_sum(std::span<double> values) { allreduce(values, {}); }
  double allreduce_sum(double value);
  bool is_root() const { return rank() == 0; }
};

class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce(std::span<double>, std::span<double>) override {}
  void allreduce_sum(std::span<int64_t>) override {}
  void broadcast_from_root(std::string&) override {}
  std::vector<std::string> gather_to_root(const std::string& text) override { return {text}; }
  void barrier() override {}
  // A serial run has no other rank to exchange with: `peers` must be empty.
  void start_exchange(std::span<const int> peers, std::span<const std::span<const double>>,
                      std::span<const std::span<double>>) override;
  void finish_exchange() override {}
  std::string library_version() const override { return "none (serial)"; }
  [[noreturn]] void abort(int exit_code) override;
  using Communicator::allreduce_sum;
};

// Runs `work` on every rank and agrees on the outcome: when any rank threw an InputError, the
// lowest such rank's message is rethrown on every rank, so all ranks leave together and no rank
// waits for a partner that has given up.
class CollectiveError : public std::exception {
 public:
  CollectiveError(std::string message, bool reporter)
      : message_(std::move(message)), reporter_(reporter) {}
  const char* what() const noexcept override { return message_.c_str(); }
  // True on the one rank that should print the message.
  bool reporter() const { return reporter_; }

 private:
  std::string message_;
  bool reporter_;
};

template <class Work>
void run_collectively(Communicator& comm, Work&& work);

}  // namespace pdsp

#include "pdsp/parallel/communicator_impl.hpp"
