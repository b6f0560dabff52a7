#include "traces/collectives/collective_planner.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "topologies/nvlink_domains.hpp"
#include "traces/collectives/chain_planner.hpp"
#include "traces/collectives/collnet_planner.hpp"
#include "traces/collectives/flow_plans.hpp"
#include "traces/collectives/nccl_net_channels.hpp"
#include "traces/collectives/nvls_planner.hpp"
#include "traces/collectives/nvls_tree_planner.hpp"
#include "traces/collectives/pat_planner.hpp"
#include "traces/collectives/ring_layout.hpp"
#include "traces/collectives/ring_planner.hpp"
#include "traces/collectives/tree_planner.hpp"

namespace fabsim::traces {

CollectivePlanner::CollectivePlanner(topo::FabricBackend& fabric) : fabric_(fabric) {
  const auto& spec = fabric.spec();
  const auto domains = topo::nvlink_domains(spec);
  domain_of_gpu_ = domains.domain_of_gpu;
  rail_of_gpu_ = domains.local_index;
  // NIC line rate per GPU, as `topo check` prints it: network ports of NICs over GPUs.
  double network = 0;
  for (const auto& l : spec.links)
    if ((l.kind == topo::LinkKind::kInfiniband || l.kind == topo::LinkKind::kEthernet) &&
        (spec.devices[l.a].kind == topo::DeviceKind::kNic || spec.devices[l.b].kind == topo::DeviceKind::kNic))
      network += l.raw_bandwidth().gbytes_per_second();
  network_per_gpu_gbps_ = spec.gpus.empty() ? 0.0 : network / static_cast<double>(spec.gpus.size());
  const auto nics = std::count_if(spec.devices.begin(), spec.devices.end(), [](const auto& d) { return d.kind == topo::DeviceKind::kNic; });
  if (nics > 0 && !spec.gpus.empty()) nics_per_gpu_ = std::max(1, static_cast<int>(nics / static_cast<long>(spec.gpus.size())));
  // NCCL's GPU-to-NIC path type, as far as it matters to its NVLS tuning:
  // PXB or closer when each GPU and a NIC hang off one PCIe switch device.
  // A root complex is a switch device here too, so a NIC beside its GPU on
  // the root complex (NCCL: PHB) counts as near; every stock topology puts
  // its NICs on their GPUs' PCIe switches.
  if (nics > 0) {
    std::vector<std::vector<int>> pcie_switches(spec.devices.size());  // by GPU or NIC: its PCIe switch neighbours
    for (const auto& l : spec.links)
      if (l.kind == topo::LinkKind::kPcie) {
        if (spec.devices[l.b].kind == topo::DeviceKind::kSwitch) pcie_switches[static_cast<std::size_t>(l.a)].push_back(l.b);
        if (spec.devices[l.a].kind == topo::DeviceKind::kSwitch) pcie_switches[static_cast<std::size_t>(l.b)].push_back(l.a);
      }
    std::vector<char> switch_with_nic(spec.devices.size(), 0);
    for (std::size_t d = 0; d < spec.devices.size(); ++d)
      if (spec.devices[d].kind == topo::DeviceKind::kNic)
        for (int sw : pcie_switches[d]) switch_with_nic[static_cast<std::size_t>(sw)] = 1;
    for (int g : spec.gpus) {
      const auto& near = pcie_switches[static_cast<std::size_t>(g)];
      if (std::none_of(near.begin(), near.end(), [&](int sw) { return switch_with_nic[static_cast<std::size_t>(sw)] != 0; }))
        nic_under_gpu_pcie_switch_ = false;
    }
  }
  // The network plugin's reported latency: one NIC model per fabric in practice; the largest if several.
  for (const auto& d : spec.devices)
    if (d.kind == topo::DeviceKind::kNic) {
      plugin_latency_ = std::max(plugin_latency_, spec.catalogue.nics.at(d.model).net_latency);
      call_latency_ = std::max(call_latency_, spec.catalogue.nics.at(d.model).net_call_latency);
    }
}

bool CollectivePlanner::sharp_available(const std::vector<int>& gpus, const std::vector<int>& domains, const std::vector<int>& rails) {
  for (const auto& heads : collnet_head_groups(domains, rails)) {
    std::vector<int> group;
    for (int r : heads) group.push_back(gpus[static_cast<std::size_t>(r)]);
    if (!fabric_.supports_network_reduction(group)) return false;
  }
  return true;
}

bool CollectivePlanner::nvls_available(const std::vector<int>& gpus) {
  auto [it, inserted] = nvls_cache_.try_emplace(gpus, false);
  if (inserted) it->second = gpus.size() > 1 && fabric_.supports_in_switch_collectives(gpus);
  return it->second;
}

namespace {

/// Calls NCCL runs as point-to-point operations, without the tuner.
bool is_point_to_point(const CollectiveCall& call) {
  return call.flows || runs_point_to_point(call.op);
}

}  // namespace

TunerRequest CollectivePlanner::tuner_request(const CollectiveCall& call) {
  const auto& gpu = fabric_.spec().gpu_model(call.gpus.front());
  const int ranks = static_cast<int>(call.gpus.size());
  const bool nvls = call.op == CollectiveOp::kAllReduce && nvls_available(call.gpus);
  TunerRequest request{call.op, ranks, call.bytes, call.protocol, call.channels, call.algorithm, nvls};
  if (call.nccl != nullptr) request.nccl = call.nccl;
  std::map<int, std::vector<int>> per_node;  // GPUs in each NVLink domain
  for (int g : call.gpus) per_node[domain_of_gpu_[static_cast<std::size_t>(g)]].push_back(g);
  request.nodes = static_cast<int>(per_node.size());
  if (request.nodes > 1) {
    int fewest = ranks;
    for (const auto& [domain, members] : per_node) fewest = std::min(fewest, static_cast<int>(members.size()));
    request.network_bus_gbps = fewest * network_per_gpu_gbps_;
    request.ranks_per_node = fewest;
    if (nics_per_gpu_ > 0) request.nic_gbps = network_per_gpu_gbps_ / nics_per_gpu_;
    request.nic_under_gpu_pcie_switch = nic_under_gpu_pcie_switch_;
    request.net_plugin_latency_us = static_cast<double>(plugin_latency_) / 1e6;
    if (fewest > 1 && nics_per_gpu_ > 0) {
      // NCCL's ring graph through each node's NICs; at one GPU per node its
      // search is not modelled and the GPU's ring_channels stay.
      const auto graph = nccl_net_ring_graph(gpu.architecture, fewest * nics_per_gpu_, network_per_gpu_gbps_ / nics_per_gpu_,
                                             gpu.link_ports * nccl_nvlink_link_gbps(gpu.architecture));
      request.network_graph_channels = graph.graph_channels;
      request.network_runtime_channels = graph.runtime_channels;
    }
    request.nvls_in_every_node = call.op == CollectiveOp::kAllReduce && fewest > 1 &&
                                 std::all_of(per_node.begin(), per_node.end(), [&](const auto& node) { return nvls_available(node.second); });
  }
  return request;
}

std::optional<TunerChoice> CollectivePlanner::tuner_choice(const CollectiveCall& call) {
  if (is_point_to_point(call)) return std::nullopt;
  return choose(fabric_.spec().gpu_model(call.gpus.front()), tuner_request(call));
}

PlannedCall CollectivePlanner::plan(const CollectiveCall& call) {
  const auto& gpu = fabric_.spec().gpu_model(call.gpus.front());
  const int ranks = static_cast<int>(call.gpus.size());
  PlannedCall out;
  // plus reduce_overhead below, for a reducing plan
  out.launch_overhead = one_gpu_per_process_ && gpu.launch_overhead_one_gpu_per_process ? *gpu.launch_overhead_one_gpu_per_process
                                                                                       : gpu.launch_overhead;
  auto& plan = out.plan;
  auto& params = out.params;
  params.gpu_of_rank = call.gpus;
  const bool flow_level = fabric_.flow_level();
  const bool point_to_point = is_point_to_point(call);
  // The protocol whose network step the plan's NIC crossings pay, and the
  // row of NCCL's NET latencies (tuning.cc) it takes: Ring's; Tree's for
  // trees and for rings at one GPU per node, whose latencies NCCL takes as
  // fully exposed; NVLSTree's.
  topo::Protocol net_protocol = topo::Protocol::kSimple;
  enum class NetRow { kRing, kTree, kNvlsTree } net_row = NetRow::kRing;
  // PAT keeps several of its log2(n) network steps in flight: NCCL's model
  // charges each a 3.5th of the network latency (tuning.cc, nccl-model.md §4).
  double net_step_share = 1.0;
  if (point_to_point) {
    // A communicator over several NVLink domains runs NCCL's multi-node P2P (P2PNetwork).
    P2PNetwork network;
    for (int g : call.gpus) network.domain_of_rank.push_back(domain_of_gpu_[static_cast<std::size_t>(g)]);
    const bool spans_nodes = std::any_of(network.domain_of_rank.begin(), network.domain_of_rank.end(),
                                         [&](int d) { return d != network.domain_of_rank.front(); });
    network.channels_per_net_peer = p2p_net_peer_channels(nics_per_gpu_, network_per_gpu_gbps_);
    const P2PNetwork* across = spans_nodes ? &network : nullptr;
    // A forced channel count sets the communicator's, as NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS do.
    const P2PChannelSetup setup = p2p_channel_setup(gpu, call.channels, call.nccl);
    plan = call.flows ? plan_p2p_flows(*call.flows, ranks, gpu, flow_level, across, &setup)
                      : plan_p2p({call.op, ranks, call.root, call.bytes}, gpu, flow_level, across, &setup);
    net_protocol = *parse_protocol(plan.protocol);
    params.step_latency = gpu.protocols.at(net_protocol).step_latency;
  } else {
    const bool nvls_switch = nvls_available(call.gpus);
    std::vector<int> domains, rails;
    for (int g : call.gpus) {
      domains.push_back(domain_of_gpu_[static_cast<std::size_t>(g)]);
      rails.push_back(rail_of_gpu_[static_cast<std::size_t>(g)]);
    }
    const TunerRequest request = tuner_request(call);
    const TunerChoice choice = choose(gpu, request);
    if (choice.algorithm == Algorithm::kCollNetDirect) {
      if (call.op != CollectiveOp::kAllReduce || request.nodes < 2 || !sharp_available(call.gpus, domains, rails))
        throw core::ConfigError(fabric_.spec().file, "/devices",
                                "CollNet needs an all_reduce across nodes whose heads (the h-th GPU of every node) reach switches with "
                                "in-network reduction (SHARP): their leaves, and one switch above all the leaves when there are several; "
                                "deeper SHARP trees are not modelled");
      const auto& simple = gpu.protocols.at(topo::Protocol::kSimple);
      plan = plan_collnet_direct({ranks, call.bytes, choice.channels, call.element_size}, simple, domains, rails, flow_level);
      params.step_latency = simple.step_latency;
    } else if (choice.algorithm == Algorithm::kNvlsTree) {
      if (!request.nvls_in_every_node || !gpu.nvls)
        throw core::ConfigError(fabric_.spec().file, "/devices",
                                "NVLSTree needs an all_reduce across nodes, each node's GPUs (two or more) on a switch with in-network reduction");
      const NvlsTreeRequest tree{ranks, call.bytes, choice.channels, call.element_size, nvls_tree_max_chunk(gpu, request)};
      plan = plan_nvls_tree(tree, *gpu.nvls, gpu.protocols.at(topo::Protocol::kSimple), domains, rails, flow_level);
      params.step_latency = gpu.nvls->step_latency;
      net_row = NetRow::kNvlsTree;
    } else if (choice.algorithm == Algorithm::kNvls) {
      const bool gather_scatter = call.op == CollectiveOp::kAllGather || call.op == CollectiveOp::kReduceScatter;
      if (!gather_scatter && call.op != CollectiveOp::kAllReduce)
        throw core::ConfigError(fabric_.spec().file, "/devices",
                                "NVLS runs all_reduce, all_gather and reduce_scatter, not " + collective_name(call.op));
      if (!nvls_switch)
        throw core::ConfigError(fabric_.spec().file, "/devices", "NVLS needs a switch with in-network reduction attached to every GPU used");
      const NvlsRequest request{ranks, call.bytes, choice.channels, call.element_size};
      if (gather_scatter) {
        plan = plan_nvls_gather_scatter(call.op, request, *gpu.nvls);
      } else {
        plan = flow_level ? plan_nvls_flow(request, *gpu.nvls) : plan_nvls_all_reduce(request, *gpu.nvls);
      }
      params.step_latency = gpu.nvls->step_latency;
    } else {
      const auto& protocol = gpu.protocols.at(choice.protocol);
      ChainRequest chain{call.op, ranks, call.root, call.bytes, choice.channels, choice.protocol, call.element_size};
      // LL and LL128 receivers pass a step on line by line over NVLink. A
      // network proxy sends whole steps (transport/net.cc waits for every
      // line's flag of a step), so a chain across nodes keeps them whole; the
      // flow level pipelines its own.
      if (!flow_level && request.nodes == 1) chain.forward_grain = line_forward_grain(choice.protocol, protocol);
      if (choice.algorithm == Algorithm::kTree || (request.nodes == ranks && ranks > 1)) net_row = NetRow::kTree;
      if (choice.algorithm == Algorithm::kTree) {
        plan = plan_double_binary_tree(chain, protocol, domains, rails, flow_level && request.nodes > 1);
      } else if (choice.algorithm == Algorithm::kPat) {
        if (request.nodes != ranks || ranks < 2)
          throw core::ConfigError(fabric_.spec().file, "/devices",
                                  "PAT runs across nodes at one GPU per node (NCCL enables it only there)");
        const RingRequest pat{call.op, ranks, call.bytes, choice.channels, choice.protocol, call.element_size};
        plan = plan_pat(pat, protocol);
        net_step_share = 1.0 / 3.5;
      } else if (call.op == CollectiveOp::kBroadcast || call.op == CollectiveOp::kReduce) {
        plan = plan_chain(chain, protocol);
      } else {
        const RingRequest ring{call.op, ranks, call.bytes, choice.channels, choice.protocol, call.element_size};
        const auto rings = rail_aligned_rings(domains, rails, choice.channels);
        // In one NVLink domain every channel runs the same ring over the
        // same links: one weighted flow per hop stands for them all.
        plan = flow_level ? plan_ring_flow(ring, protocol, rings.empty()) : plan_ring(ring, protocol);
        place_on_rings(plan, rings);
        // Fitted inside one NVLink domain; across nodes the NICs, not the kernel, set the pace.
        if (choice.protocol == topo::Protocol::kSimple && request.nodes == 1 &&
            (call.op == CollectiveOp::kAllGather || call.op == CollectiveOp::kReduceScatter))
          plan.payload_efficiency *= gpu.ring_gather_scatter_efficiency;
      }
      // NCCL's model prices a tree's NVLink steps on its own row (LL128 1.25 us
      // against a ring's 1.9, Simple 4.0 against 3.4).
      params.step_latency = choice.algorithm == Algorithm::kTree ? protocol.tree_step_latency : protocol.step_latency;
      net_protocol = choice.protocol;
      params.channel_cap = choice.protocol == topo::Protocol::kLL128 ? ll128_cap_per_cta(gpu, request) : protocol.channel_cap;
    }
  }
  // A collective whose GPUs reduce what they receive pays the reduction's base
  // latency once (NCCL's model has per-call bases and per-step hop latencies,
  // no per-step reduction term); where the switch reduces (NVLS) no GPU does.
  // (Point-to-point plans never reduce: no scan of an all-to-all's pairs.)
  if (!point_to_point &&
      std::any_of(plan.transfers.begin(), plan.transfers.end(), [](const PlannedTransfer& t) { return t.reduced_on_receipt; }))
    out.launch_overhead += gpu.reduce_overhead;
  // NCCL's model: a network step costs NET hwLat plus the plugin's latency,
  // counted twice with Simple for the GPUDirect flush (tuning.cc).
  const auto& net = gpu.protocols.at(net_protocol);
  core::TimePs net_hardware = net.net_step_latency;
  if (net_row == NetRow::kTree) net_hardware = net.tree_net_step_latency;
  if (net_row == NetRow::kNvlsTree && gpu.nvls && gpu.nvls->net_step_latency) net_hardware = *gpu.nvls->net_step_latency;
  const core::TimePs net_step = net_hardware + plugin_latency_ * (net_protocol == topo::Protocol::kSimple ? 2 : 1);
  params.net_step_latency = static_cast<core::TimePs>(static_cast<double>(net_step) * net_step_share);
  // The SM writes each network step where the proxy sends it from: host memory for LL.
  params.net_staging_rate = net.net_staging_rate;
  params.domain_of_gpu = &domain_of_gpu_;
  if (flow_level && !plan.aggregated) plan = coalesce_for_flow(plan, !point_to_point);
  params.flow_level = plan.aggregated;
  if (!point_to_point) params.drift = gpu.channel_drift;
  // A call whose data crosses NVLink domains pays its network path's per-call
  // cost once (a send between two GPUs of one node does not, whatever its communicator).
  const auto domain_of_rank = [&](int rank) {
    return domain_of_gpu_[static_cast<std::size_t>(params.gpu_of_rank[static_cast<std::size_t>(rank)])];
  };
  if (call_latency_ > 0 && std::any_of(plan.transfers.begin(), plan.transfers.end(), [&](const PlannedTransfer& t) {
        return t.kind == models::TransferKind::kPointToPoint && domain_of_rank(t.source) != domain_of_rank(t.destination);
      }))
    out.launch_overhead += call_latency_;
  return out;
}

}  // namespace fabsim::traces
