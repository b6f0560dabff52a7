#pragma once
/// A crossbar switch (NVSwitch, InfiniBand or Ethernet switch): segments are
/// routed by the port list they carry, cross the chip after a fixed traversal
/// latency and cut through to the output link, which serves its inputs in
/// arrival order. Each input port has a finite buffer whose space is granted
/// to the upstream link as credits.

#include <systemc>

#include "models/segment.hpp"

namespace fabsim::models {

struct SwitchParams {
  int ports = 0;                 ///< physical ports, for validation and reports
  TimePs traversal_latency = 0;  ///< input to output, head of segment
  Bytes input_buffer = 0;        ///< per input port; 0 = unlimited
};

class CrossbarSwitch : public sc_core::sc_module, public SegmentSink {
 public:
  sc_core::sc_export<SegmentSink> in;                         ///< every attached link delivers here
  sc_core::sc_vector<sc_core::sc_port<LinkTransmitter>> out;  ///< one per attached link direction

  CrossbarSwitch(sc_core::sc_module_name name, const SwitchParams& params, std::size_t attached_links);

  void receive(Segment&& segment) override;
  bool consumes_at_tail() const override { return false; }
  Bytes input_buffer_bytes() const override { return params_.input_buffer; }

  const SwitchParams& params() const { return params_; }
  std::uint64_t segments_forwarded() const { return forwarded_; }

 private:
  SwitchParams params_;
  std::uint64_t forwarded_ = 0;
};

}  // namespace fabsim::models
