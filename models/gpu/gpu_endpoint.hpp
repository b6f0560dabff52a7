#pragma once
/// A GPU as a fabric endpoint: it injects segments into its links and
/// consumes segments addressed to it, reporting each transfer once all its
/// segments have arrived. It knows nothing of collectives; the executor in
/// traces/ drives it through the Transport interface.

#include <systemc>
#include <unordered_map>

#include "models/segment.hpp"

namespace fabsim::models {

/// Told when every segment of a transfer has reached its destination.
class DeliveryListener {
 public:
  virtual ~DeliveryListener() = default;
  virtual void on_transfer_delivered(std::uint64_t transfer_id, TimePs at) = 0;
};

class GpuEndpoint : public sc_core::sc_module, public SegmentSink {
 public:
  sc_core::sc_export<SegmentSink> in;                         ///< every attached link delivers here
  sc_core::sc_vector<sc_core::sc_port<LinkTransmitter>> out;  ///< one per attached link direction

  /// `listener` is an observer that must outlive the endpoint.
  GpuEndpoint(sc_core::sc_module_name name, std::size_t attached_links, DeliveryListener& listener);

  /// Sends `segment` out of port route->out_ports[0], starting no earlier than `at`.
  void inject(Segment&& segment, TimePs at);

  void receive(Segment&& segment) override;
  bool consumes_at_tail() const override { return true; }
  Bytes input_buffer_bytes() const override { return 0; }

  Bytes bytes_received() const { return bytes_received_; }

 private:
  DeliveryListener& listener_;
  std::unordered_map<std::uint64_t, std::uint32_t> arrived_;
  Bytes bytes_received_ = 0;
};

}  // namespace fabsim::models
