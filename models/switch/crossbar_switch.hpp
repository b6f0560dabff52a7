#pragma once
/// A crossbar switch (NVSwitch, InfiniBand or Ethernet switch): segments are
/// routed by the port list they carry, cross the chip after a fixed traversal
/// latency and cut through to the output link, which serves its inputs in
/// arrival order. Each input port has a finite buffer whose space is granted
/// to the upstream link as credits. With in-network reduction (NVSwitch gen3
/// and later), it also reduces the same piece arriving from every member of a
/// group and multicasts a piece to every member (NVLink SHARP).

#include <systemc>
#include <unordered_map>

#include "models/segment.hpp"

namespace fabsim::models {

struct SwitchParams {
  int ports = 0;                 ///< physical ports, for validation and reports
  TimePs traversal_latency = 0;  ///< input to output, head of segment
  Bytes input_buffer = 0;        ///< per input port; 0 = unlimited
  bool in_network_reduction = false;  ///< NVLink SHARP / SHARP: reduce and multicast engines
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
  struct PieceKey {
    std::uint64_t transfer_id;
    std::uint32_t piece;
    bool operator==(const PieceKey&) const = default;
  };
  struct PieceHash {
    std::size_t operator()(const PieceKey& k) const { return std::hash<std::uint64_t>()(k.transfer_id * 1000003u + k.piece); }
  };
  struct PartialReduction {
    std::uint16_t arrived = 0;
    TimePs last_tail = 0;
  };

  void forward(Segment&& segment, TimePs tail_ready);
  void reduce(Segment&& segment);
  void multicast(Segment&& segment);

  SwitchParams params_;
  std::uint64_t forwarded_ = 0;
  std::unordered_map<PieceKey, PartialReduction, PieceHash> reductions_;
};

}  // namespace fabsim::models
