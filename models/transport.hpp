#pragma once
/// The narrow interface between the collective layer and the fabric:
/// send(transfer) now, be told when it has been delivered. A segment-level
/// fabric implements it; a flow-level or analytical backend could too.

#include <cstdint>

#include "sim/core/units.hpp"

namespace fabsim::models {

/// One point-to-point transfer between two GPUs (global GPU indexes).
struct TransferRequest {
  std::uint64_t id = 0;
  int source = 0;
  int destination = 0;
  core::Bytes payload_bytes = 0;
  core::Bytes wire_bytes = 0;  ///< payload plus protocol overhead (LL flags, LL128 flag words)
};

class TransferCompletion {
 public:
  virtual ~TransferCompletion() = default;
  virtual void on_transfer_complete(std::uint64_t id, core::TimePs at) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Starts `request` at the current simulated time.
  virtual void send(const TransferRequest& request) = 0;
  /// The observer told of completions; must outlive the transport's use.
  virtual void set_completion(TransferCompletion* completion) = 0;
};

}  // namespace fabsim::models
