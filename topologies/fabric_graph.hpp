#pragma once
/// The fabric as a Boost.Graph graph (devices as vertices, link bundles as
/// edges) and its routing. Routes are least-cost paths (each link kind has a
/// routing cost, so NVLink wins over PCIe); GPUs forward only as PXN relays (below). Where the
/// hardware sprays (NVLink, PCIe, adaptive network routing) a transfer is
/// striped over every equal-cost path; elsewhere ECMP picks one path per flow
/// by a deterministic hash. A route is computed on first use from a cost
/// field toward its destination that stops at the source's cost (Dial's
/// bucket queue: costs are small integers), and cached as paths. Fields are
/// kept per destination (only the devices they settled) within a memory
/// budget, so an all-to-all computes one field per destination, not one per
/// pair; no all-pairs table is kept, so a 16k-GPU fabric routes in little memory.
///
/// PXN: NCCL (2.12 and later, NCCL_PXN_DISABLE=0 by default) moves a GPU's
/// network traffic over NVLink to a peer GPU and out of that GPU's NIC
/// rather than through the CPU ("PCI x NVLink"). A GPU therefore relays
/// traffic that arrives over NVLink and leaves over PCIe toward a NIC, at
/// kPxnRelayCost on top of the links: a PXN route wins over one through a
/// root complex (4 per PCIe hop) and never over a direct one. Of the GPUs
/// that could relay at equal cost, the one with the destination's index in
/// its NVLink domain does, as NCCL picks the proxy on the NIC the peer uses
/// (NIC k on rail k): all-to-all traffic then spreads evenly over the NICs.

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "models/segment.hpp"
#include "topologies/search_queue.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

/// One direction of a link bundle: link index and whether it runs b -> a.
struct LinkDirectionRef {
  int link = -1;
  bool reverse = false;
  int id() const { return 2 * link + (reverse ? 1 : 0); }
};

/// A least-cost path between two GPUs, as output ports and as link directions.
struct FabricPath {
  models::Route route;
  std::vector<LinkDirectionRef> hops;
  Bandwidth bottleneck;  ///< smallest effective bandwidth along the path
};

/// Pairs of GPU ranks of `gpus` (up to `limit`) that cannot reach each other
/// when the link bundles marked in `dead` (by link index) carry nothing.
std::vector<std::pair<int, int>> unreachable_gpu_pairs(const TopologySpec& spec, const std::vector<char>& dead,
                                                       const std::vector<int>& gpus, std::size_t limit);

/// What relaying through a GPU (PXN) adds to a route's cost. Two NVLink hops
/// and the relay (1 + 1 + 2) cost less than the two PCIe hops to and from a
/// root complex (4 + 4), but more than the two network hops up to a spine and
/// down (1 + 1): traffic takes PXN where it would otherwise cross the CPU (a
/// failed NIC, rails with no spine), and a spine where there is one.
inline constexpr std::uint32_t kPxnRelayCost = 2;

class FabricGraph {
 public:
  struct VertexProps {
    int device = -1;
  };
  struct EdgeProps {
    int link = -1;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexProps, EdgeProps>;

  /// Builds the graph; throws core::ConfigError naming two GPUs when one
  /// cannot reach the other. `max_paths` caps how many paths a flow stripes over.
  /// `guided`: route searches head for their source by landmark bounds (A*);
  /// off, they spread evenly (Dijkstra). The routes are the same: tests compare them.
  /// `field_slot_bytes`: what loaded fields may take beyond kFieldSlots (kFieldSlotBytes).
  explicit FabricGraph(const TopologySpec& spec, int max_paths = 64, bool guided = true,
                       std::size_t field_slot_bytes = kFieldSlotBytes);

  const Graph& graph() const { return graph_; }
  /// The paths a flow from GPU rank `src` to GPU rank `dst` (src != dst)
  /// takes; `flow` (a channel) feeds the ECMP hash. Cached; references stay valid.
  const std::vector<FabricPath>& paths(int src, int dst, std::uint32_t flow = 0);
  /// The same paths, cached only while the path cache is below
  /// kPathCacheEntries or when their field had to be computed: for callers that use them at once (the
  /// flow level), so n^2 one-off pairs of an all-to-all are not all kept. The
  /// reference is valid until the next call of paths_once or a route change.
  const std::vector<FabricPath>& paths_once(int src, int dst, std::uint32_t flow = 0);
  /// Output ports of a device, in port order: the link directions leaving it.
  const std::vector<LinkDirectionRef>& ports(int device) const { return ports_[device]; }
  /// The device at the far end of one of `device`'s ports.
  int neighbour(int device, const LinkDirectionRef& port) const;

  /// Hops of the longest least-cost GPU-to-GPU route. Exact from every GPU
  /// up to `exact_limit` GPUs; beyond, from an evenly spaced sample of
  /// `exact_limit / 32` GPUs (`diameter_sampled` then says so).
  int diameter(int exact_limit = 2048);
  bool diameter_sampled() const { return diameter_sampled_; }

  /// False for a failed bundle: no route crosses it (LinkSpec::down, or fail_link during a run).
  bool live(int link) const { return dead_[static_cast<std::size_t>(link)] == 0; }
  /// A bundle failing, or keeping `kept` of its bandwidth, during a run:
  /// routes computed from now on go around it or weigh it by its new
  /// bandwidth (cached routes are dropped).
  void fail_link(int link);
  void degrade_link(int link, double kept);

  /// Pairs (and hashed flows) whose paths paths_once still caches.
  static constexpr std::size_t kPathCacheEntries = std::size_t{1} << 16;
  /// Hashed flows of one pair whose paths a newly computed field fills at once.
  static constexpr std::uint32_t kFlowsPerField = 64;
  /// Bytes of settled devices the field cache keeps; beyond, it starts over.
  static constexpr std::size_t kFieldCacheBytes = std::size_t{256} << 20;
  /// Fields held loaded at least (11 bytes per device each, with their scratch about 16).
  static constexpr std::size_t kFieldSlots = 8;
  static constexpr std::size_t kFieldBytesPerDevice = 16;
  /// Bytes of loaded fields beyond kFieldSlots: an all-to-all's peers each keep
  /// their field loaded (1,024 GPUs: 1,024 fields of 4 k devices, 64 MiB), not
  /// copied out and back for each of its senders in turn.
  static constexpr std::size_t kFieldSlotBytes = std::size_t{64} << 20;
  /// Sources a field's search is aimed at when resumed for them; it goes on unaimed after.
  static constexpr int kAimedResumes = 4;
  /// Landmarks of the route search's lower bound (4 bytes per device each).
  static constexpr int kLandmarks = 16;

 private:
  /// A field's cost for a device it has not reached.
  static constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();
  struct Field;
  /// Starts the active field toward `destination` afresh and settles it
  /// until the routes from `stop_at` (a device; -1: every device) are in it. With
  /// `skip_other_hosts`, the search enters from the network only the NICs of
  /// the destination's host and the hosts admitted (admit_host).
  void compute_field(int destination, int stop_at = -1, bool skip_other_hosts = false);
  /// Searches the active field further, until the routes from `stop_at` are in it (or everything is).
  void settle(int stop_at);
  /// Lets the active field's search enter `host` (a host_ id) from the network.
  void admit_host(int host);
  /// Points the active field's search at `target` (-1: none): its open devices are ordered by their bound to it.
  void aim_at(int target);
  /// A lower bound on the cost from `device` to the field's target (0 without one).
  std::uint32_t estimate(const Field& field, int device) const;
  /// Computes the landmarks' costs on first use.
  void ensure_landmarks();
  /// Least costs from `from` over every link (no relay rules): what the landmarks hold.
  void plain_costs(int from, std::vector<std::uint32_t>& out) const;
  /// Makes the active field the one toward `destination_device` that holds the
  /// routes from `source_device`: a loaded one, a kept one, or one searched
  /// further or afresh. True when afresh (route() then walks the pair's other hashed flows).
  bool load_field(int destination_device, int source_device);
  /// Clears what the active field set.
  void reset_scratch();
  /// The cached paths of a pair (any flow, or this hashed flow); null if none.
  const std::vector<FabricPath>* find_cached(int src, int dst, std::uint32_t flow) const;
  /// Walks the paths of one flow; `computed` says whether its field had to be computed.
  std::vector<FabricPath> route(int src, int dst, std::uint32_t flow, bool& hashed, bool& computed);
  std::vector<FabricPath> walk(int src, int dst, std::uint32_t flow, bool& hashed) const;
  void check_connected();

  const TopologySpec& spec_;
  int max_paths_;
  Graph graph_;
  std::vector<std::vector<LinkDirectionRef>> ports_;
  /// One destination's cost field over every device: the scratch a route is
  /// walked on. A few are held at once (kFieldSlots, least recently used
  /// replaced), so a schedule alternating between destinations (a tree's
  /// parent and children, two rings' neighbours) does not reload each one.
  struct Field {
    int destination = -1;  ///< -1: holds nothing
    std::uint64_t used = 0;
    bool complete = false;    ///< searched to the end: holds every route to the destination
    bool all_hosts = true;    ///< the search may enter every host; else only the admitted ones
    int resumes = 0;          ///< searches further for new sources since it was begun
    std::vector<std::uint32_t> cost;  // cost to the destination
    std::vector<std::uint16_t> hops;  // hops of that route
    std::vector<char> relay;          // a GPU that may relay (PXN)
    std::vector<char> via_nic;        // the route on passes a NIC
    std::vector<int> touched;         // devices the field set
    std::vector<char> closed;         // searched from: its cost and hops are final
    std::vector<char> targeted;       // a source whose routes the field holds
    std::vector<int> targets;         // those sources
    std::vector<char> admitted;       // by host_ id: hosts the search may enter from the network
    std::vector<int> hosts;           // the admitted hosts
    std::vector<std::uint32_t> aim;   // the target's landmark costs (empty: no target)
    SearchQueue open;                 // devices reached and not yet searched from (or again, after admit_host)
  };
  /// Copies a field leaving its slot into the field cache (field_cache_).
  void keep_field(const Field& field);
  /// Whether `field` already holds every least-cost route from `source` (a device).
  bool holds_routes_from(const Field& field, int source) const;
  /// Puts a device on the field's open heap at its current cost.
  void push(Field& field, int device) const;
  /// The slot to (re)fill for `destination`: the one holding it, an empty one, or the least recently used.
  Field& slot_for(int destination);
  /// The loaded slot holding the field toward `destination`, or null.
  Field* slot_holding(int destination);
  /// Makes `field` the one toward `destination` (indexed in slot_of_).
  void set_destination(Field& field, int destination);
  void activate(Field& field);
  std::vector<Field> slots_;
  std::size_t max_slots_ = kFieldSlots;
  std::vector<int> slot_of_;  // by device: the slot its field was last loaded in (checked against the slot's destination)
  std::size_t active_ = 0;  // the slot routes are walked on (an index: copies stay valid)
  std::uint64_t use_clock_ = 0;
  struct Settled {
    int device;
    std::uint32_t cost;
    std::uint16_t hops;
    char relay, via_nic, closed;
  };
  struct KeptField {
    bool complete = false;
    bool all_hosts = true;
    std::vector<int> hosts, targets;
    std::vector<Settled> settled;  ///< every device the field set, the open ones included
  };
  std::unordered_map<int, KeptField> field_cache_;  // by destination device
  std::size_t field_cache_bytes_ = 0;
  std::unordered_map<std::uint64_t, std::vector<FabricPath>> path_cache_;  // by (src, dst, flow)
  std::vector<FabricPath> uncached_paths_;  // paths_once's answer past the cache cap
  std::unordered_map<int, std::vector<int>> host_nics_;  // by host_ id: its NICs
  /// A port as the route search reads it: the far device, the link, its cost and kind.
  struct Edge {
    int to;
    int link;
    std::uint32_t cost;
    LinkKind kind;
  };
  static constexpr std::uint8_t kForwards = 1, kIsNic = 2;
  std::vector<std::uint8_t> device_class_;  // by device: kForwards | kIsNic
  std::vector<std::uint32_t> edge_begin_;   // by device: its first port in edges_ (ports_ order)
  std::vector<Edge> edges_;
  bool guided_;
  int landmarks_ = -1;                                   // -1: not computed yet
  std::vector<std::uint32_t> landmark_cost_;             // by device, then landmark: least cost between them
  std::vector<int> host_;  // by device: one per set of devices NVLink and PCIe join (a node); a network switch is its own
  std::vector<int> local_index_;  // by device: a GPU's index in its NVLink domain (NCCL's PXN relay rule), -1 for others
  std::vector<char> dead_;                                                 // by link: failed
  std::vector<double> kept_;                                               // by link: bandwidth kept since a degradation during the run
  bool diameter_sampled_ = false;
};

}  // namespace fabsim::topo
