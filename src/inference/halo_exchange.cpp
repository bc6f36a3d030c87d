#include "pdsp/inference/halo_exchange.hpp"

#include <algorithm>

#include "pdsp/util/clock.hpp"

namespace pdsp {
namespace {

std::span<const LocalIndex> class_slots(const std::vector<LocalIndex>& slots,
                                        const std::vector<int64_t>& class_ptr, int64_t colour) {
  return std::span<const LocalIndex>(slots).subspan(class_ptr[colour],
                                                    class_ptr[colour + 1] - class_ptr[colour]);
}

}  // namespace

HaloExchange::HaloExchange(const Dataset& data, const FactorGraph& graph, const Kernels& kernels,
                           Communicator& comm)
    : data_(data),
      graph_(graph),
      shard_(*data.shard),
      kernels_(kernels),
      comm_(comm),
      send_(shard_.neighbours.size()),
      recv_(shard_.neighbours.size()) {}

void HaloExchange::post() {
  const Clock::time_point start = Clock::now();
  peers_.clear();
  send_spans_.clear();
  recv_spans_.clear();
  for (size_t i : active_) {
    peers_.push_back(shard_.neighbours[i].rank);
    send_spans_.emplace_back(send_[i]);
    recv_spans_.emplace_back(recv_[i]);
    values_sent_ += static_cast<int64_t>(send_[i].size());
  }
  comm_.start_exchange(peers_, send_spans_, recv_spans_);
  seconds_ += seconds_since(start);
}

void HaloExchange::wait() {
  const Clock::time_point start = Clock::now();
  comm_.finish_exchange();
  seconds_ += seconds_since(start);
}

void HaloExchange::start_messages(int64_t colour, const MessageState& lambda) {
  // Both sides of a pair list the same slots, so both skip a pair with nothing either way.
  active_.clear();
  for (size_t i = 0; i < shard_.neighbours.size(); ++i) {
    const ShardNeighbour& n = shard_.neighbours[i];
    const auto send = class_slots(n.send_slots, n.send_class_ptr, colour);
    const auto recv = class_slots(n.recv_slots, n.recv_class_ptr, colour);
    if (send.empty() && recv.empty()) continue;
    send_[i].clear();
    kernels_.pack_slots(send, lambda, send_[i]);
    int64_t values = 0;
    for (LocalIndex e : recv) values += graph_.message_offset(e + 1) - graph_.message_offset(e);
    recv_[i].resize(static_cast<size_t>(values));
    active_.push_back(i);
  }
  if (!active_.empty()) post();
}

void HaloExchange::finish_messages(int64_t colour, MessageState& lambda) {
  if (active_.empty()) return;
  wait();
  for (size_t i : active_) {
    const ShardNeighbour& n = shard_.neighbours[i];
    kernels_.unpack_slots(class_slots(n.recv_slots, n.recv_class_ptr, colour), recv_[i].data(),
                          lambda);
  }
}

void HaloExchange::beliefs(double* belief) {
  active_.clear();
  for (size_t i = 0; i < shard_.neighbours.size(); ++i) {
    const ShardNeighbour& n = shard_.neighbours[i];
    send_[i].clear();
    for (LocalIndex v : n.send_vars)
      send_[i].insert(send_[i].end(), belief + data_.state_offset[v],
                      belief + data_.state_offset[v + 1]);
    int64_t states = 0;
    for (LocalIndex v : n.recv_vars) states += data_.card[v];
    recv_[i].resize(static_cast<size_t>(states));
    active_.push_back(i);
  }
  if (active_.empty()) return;
  post();
  wait();
  for (size_t i : active_) {
    const double* in = recv_[i].data();
    for (LocalIndex v : shard_.neighbours[i].recv_vars) {
      std::copy(in, in + data_.card[v], belief + data_.state_offset[v]);
      in += data_.card[v];
    }
  }
}

}  // namespace pdsp
