#pragma once
/// The hardware catalogue: named models of GPUs, switches and links, each
/// parameter with the source of its value (configs/hardware/catalogue.json).

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace fabsim::topo {

using core::Bandwidth;
using core::Bytes;
using core::TimePs;

/// Where one parameter's value comes from, for `fabsim describe` and the README.
struct ParamSource {
  std::string name;
  std::string value;   ///< as written in the catalogue
  std::string source;  ///< datasheet, measurement or calibration
  /// Measurement data sets (ids in configs/measurements/) the value was fitted
  /// on or derived from: predictions of those sets are in-sample.
  std::vector<std::string> fitted_on;
};

/// What a link is, which decides which devices may sit at its ends.
enum class LinkKind { kNvlink, kPcie, kInfiniband, kEthernet };
std::string link_kind_name(LinkKind k);
std::optional<LinkKind> parse_link_kind(std::string_view text);
inline bool is_network(LinkKind k) { return k == LinkKind::kInfiniband || k == LinkKind::kEthernet; }

struct LinkModel {
  std::string name;
  std::string description;
  LinkKind kind = LinkKind::kNvlink;
  Bandwidth lane_bandwidth;  ///< one link, one direction, line rate
  double efficiency = 1.0;   ///< payload share of what is left after packet headers
  TimePs latency = 0;
  int routing_cost = 1;      ///< weight of one hop in shortest-path routing
  Bytes mtu = 0;             ///< network packets: payload per packet (0: not packetised)
  Bytes packet_header = 0;   ///< network packets: header and trailer bytes per packet
  std::vector<ParamSource> sources;

  /// Payload share of the wire once every MTU-sized packet carries its headers.
  double packet_efficiency() const {
    return mtu > 0 ? static_cast<double>(mtu) / static_cast<double>(mtu + packet_header) : 1.0;
  }
};

struct SwitchModel {
  std::string name;
  std::string description;
  LinkKind link_kind = LinkKind::kNvlink;  ///< the kind of every port: NVSwitch, PCIe switch, IB or Ethernet switch
  int ports = 0;
  TimePs traversal_latency = 0;
  Bytes input_buffer = 0;
  bool in_network_reduction = false;  ///< NVLink SHARP (NVSwitch gen3+) or SHARP (InfiniBand)
  std::vector<ParamSource> sources;
};

/// A network adapter (ConnectX, BlueField): one PCIe port on the host side,
/// network ports on the other. It forwards RDMA traffic between them (the
/// GPUDirect RDMA path) after a per-message processing latency.
struct NicModel {
  std::string name;
  std::string description;
  LinkKind network_kind = LinkKind::kInfiniband;
  int network_ports = 1;
  int pcie_ports = 1;
  TimePs message_latency = 0;  ///< doorbell to first byte on the wire (and the mirror on receipt)
  /// The latency NCCL's network plugin reports for this NIC (ncclNetProperties_t
  /// latency, NCCL's graph latencyInter): added to every network step (twice
  /// with Simple, for the GPUDirect flush). 0 for NCCL's own IB/RoCE plugin.
  TimePs net_latency = 0;
  /// A cost the network path adds once per call that crosses it, beside the
  /// per-step ones: per-operation work of the plugin and its helpers (GCP
  /// TCPXO's receive data mover) that streaming hides. 0 for NCCL's IB plugin.
  TimePs net_call_latency = 0;
  /// NCCL_BUFFSIZE as the NIC's network plugin sets it for the process (aws-ofi-nccl
  /// on p5: 8 MiB); 0 when the plugin leaves NCCL's default. It sizes the Simple
  /// protocol's FIFO steps (buffsize / NCCL_STEPS) of every GPU on the fabric.
  Bytes plugin_buffsize = 0;
  Bytes input_buffer = 0;
  std::vector<ParamSource> sources;
};

/// The NCCL protocols, by their NCCL names.
enum class Protocol { kLL, kLL128, kSimple };
inline constexpr Protocol kAllProtocols[] = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};
std::string protocol_name(Protocol p);

/// How one NCCL protocol moves data on this GPU (NCCL's device code).
struct ProtocolParams {
  double payload_efficiency = 1.0;  ///< payload bytes / wire bytes
  TimePs step_latency = 0;          ///< flag/fence synchronisation per pipeline step
  /// Extra per step that crosses a NIC: the proxy thread's post, poll and
  /// completion beyond the wire the fabric simulates (NCCL's NET hwLat).
  TimePs net_step_latency = 0;
  /// The same per network step of a tree, and of a ring at one GPU per node:
  /// NCCL's NET Tree row, its latencies fully exposed (tuning.cc).
  TimePs tree_net_step_latency = 0;
  /// Per NVLink step of a tree (NCCL's NVLINK hwLat Tree row, which differs
  /// from the Ring row for LL128 and Simple); the loader sets step_latency where absent.
  TimePs tree_step_latency = 0;
  Bytes slot_bytes = 0;             ///< payload per FIFO step (NCCL_STEPS slots per connection)
  int slots = 8;                    ///< NCCL_STEPS
  int chunk_slots = 1;              ///< ring chunk = chunk_slots steps
  int slice_slots = 1;              ///< a slice (unit of forwarding) = slice_slots steps
  int threads = 512;                ///< threads per channel, for the per-call channel count
  Bytes channel_threshold = 64;     ///< bytes per thread below which NCCL drops a channel
  std::optional<Bandwidth> channel_cap;  ///< per-channel (one SM) throughput limit
  /// Per channel, how fast an SM writes a network step where the proxy sends
  /// it from, when that is host memory (LL's send buffers); none: not modelled.
  std::optional<Bandwidth> net_staging_rate;
  // NCCL tuner inputs (tuning.cc), used only to choose the protocol.
  TimePs tuner_base_latency = 0;
  TimePs tuner_hop_latency = 0;
};

/// NVLS (NVLink SHARP) as NCCL runs it on this GPU (device/all_reduce.h,
/// transport/nvls.cc): multimem loads reduced by the switch, multimem stores
/// multicast by the switch.
struct NvlsParams {
  double payload_efficiency = 1.0;  ///< NCCL's nvlsEfficiency: link use of multimem traffic
  /// The same inside NVLSTree's nodes, where the NVLS phases share their
  /// channels with the network send, receive and reduction; absent: payload_efficiency.
  std::optional<double> tree_payload_efficiency;
  /// Payload per wire byte of NVLSTree's network hops on trees of more than
  /// two nodes, at both levels: measured NVLSTree there runs its NICs below
  /// the rate the model gives them, for reasons not modelled; absent: 1.
  std::optional<double> network_efficiency_beyond_two_nodes;
  TimePs step_latency = 0;          ///< per multimem operation
  /// Extra per NVLSTree network step (NCCL's NET hwLat for NVLSTree); absent: Simple's net_step_latency.
  std::optional<TimePs> net_step_latency;
  Bytes chunk_bytes = 0;            ///< NCCL_NVLS_CHUNKSIZE
  int channels = 1;                 ///< NVLS channels (CTAs)
  TimePs tuner_latency = 0;         ///< NCCL's model latency for NVLS
  Bandwidth tuner_head_bandwidth;   ///< NCCL's model bandwidth per NVLS head
};

/// How far NCCL's channels drift apart over a long pipelined collective: each
/// `unit` of data a channel moves costs, on top of its modelled time, a delay
/// of mean `mean` and standard deviation `sd` (SM scheduling, memory and flag
/// polling jitter). The collective ends with its slowest channel, so a
/// channel moving K units adds K x mean + sqrt(K) x sd x z(N), z(N) the
/// expected largest of N standard normal draws. Unit 0: no drift.
struct ChannelDrift {
  Bytes unit = 0;
  TimePs mean = 0;
  TimePs sd = 0;
  bool active() const { return unit > 0 && (mean > 0 || sd > 0); }
};

struct GpuModel {
  std::string name;
  std::string description;
  /// "volta", "ampere", "hopper" or "blackwell": selects NCCL's per-architecture
  /// tuner tables (traces/collectives/nccl_tuner_tables.hpp).
  std::string architecture;
  int link_ports = 0;           ///< NVLink ports
  int pcie_ports = 1;           ///< host interface (PCIe) ports
  TimePs launch_overhead = 0;  ///< host enqueue + kernel launch seen between back-to-back collectives
  /// The same where each process drives one GPU (nccl-tests -g 1, MPI and
  /// torchrun jobs): launch_overhead was fitted on one thread launching 4 GPUs
  /// one after another. Absent: launch_overhead for every launch.
  std::optional<TimePs> launch_overhead_one_gpu_per_process;
  /// Extra base latency of a collective whose GPUs reduce (all_reduce, reduce_scatter,
  /// reduce; not NVLS, where the switch reduces): once per call, like
  /// NCCL's per-collective base latency, not per step (nccl-model.md §4).
  TimePs reduce_overhead = 0;
  int ring_channels = 1;       ///< NCCL's ring channel count on this platform
  ChannelDrift channel_drift;  ///< Simple-protocol collectives (ring, tree, NVLS); none when absent
  /// NCCL's Simple ring all-gather and reduce-scatter kernels: payload per
  /// wire byte relative to the all-reduce kernel's (1 when absent).
  double ring_gather_scatter_efficiency = 1.0;
  Bandwidth tuner_ring_bus_bandwidth;    ///< NCCL's graph busBw for rings (nChannels x per-channel bw)
  Bandwidth tuner_ll_max_bandwidth;      ///< llMaxBw
  Bandwidth tuner_ll128_channel_max;     ///< perChMaxRingLL128Bw
  int p2p_channels = 1;         ///< NCCL's p2p channel count (next power of two of the ring count)
  Bytes p2p_chunk = 0;          ///< P2P chunk for Simple on this GPU's links (NVLink)
  Bytes p2p_net_chunk = 128 * 1024;  ///< NCCL_P2P_NET_CHUNKSIZE: the P2P chunk when the communicator spans nodes
  Bytes p2p_ll_threshold = 0;   ///< NCCL_P2P_LL_THRESHOLD per channel
  std::map<Protocol, ProtocolParams> protocols;
  std::optional<NvlsParams> nvls;  ///< absent where the GPU has no NVLS (before Hopper)
  std::vector<ParamSource> sources;
};

struct HardwareCatalogue {
  std::string file;
  std::map<std::string, LinkModel> links;
  std::map<std::string, SwitchModel> switches;
  std::map<std::string, GpuModel> gpus;
  std::map<std::string, NicModel> nics;
};

/// Loads and validates a catalogue; throws core::ConfigError with every problem.
/// `patch`, when not null, is merged into the file first (RFC 7386): a
/// calibration profile's "catalogue_patch" replaces fitted values and their sources.
HardwareCatalogue load_hardware_catalogue(const std::string& path, const nlohmann::json& patch = nullptr);

/// The installed catalogue: configs/hardware/catalogue.json under the data root (sim/core/data_root.hpp).
std::string default_catalogue_path();

}  // namespace fabsim::topo
