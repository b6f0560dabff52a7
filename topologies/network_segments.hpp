#pragma once
/// How finely the segment level cuts a path through an InfiniBand or Ethernet
/// switch. The fabric cuts its transfers by this rule and --model auto's work
/// estimate counts their segments by it, so both live here.

#include <algorithm>

#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

/// How many segments an InfiniBand or Ethernet switch's input buffer holds at
/// least: a path through one is cut into segments of at most 1/16 of its
/// buffer. Credits are whole segments, so a buffer of two (512 KiB segments in
/// 1 MiB) let one segment waiting for a busy output hold half of an input's
/// credits and stall the traffic behind it for idle outputs, where a
/// packet-level buffer of the same bytes keeps interleaving: NCCL's Tree across
/// 4 HGX H100 nodes (512 MiB) ran at 289 / 305 / 310 / 311 GB/s with 512 / 128 /
/// 64 / 32 KiB segments, across 3 GB200 NVL4 partitions (1 GiB) at 196 / 204 /
/// 216 / 211: from 16 segments per buffer the figure moves under 3%. NVLink
/// paths keep the segment size (their fitted parameters were fitted at it).
inline constexpr Bytes kSegmentsPerNetworkBuffer = 16;
/// Network paths are not cut below this (the stock 1 MiB buffers give it), so
/// a small input buffer in a user's catalogue cannot multiply a run's segments
/// beyond the stock eightfold.
inline constexpr Bytes kSmallestNetworkSegment = 64 * 1024;

/// The largest segment a network switch with `input_buffer` bytes per input
/// admits, for segments of `segment_size` elsewhere (0: an unlimited buffer).
inline Bytes network_segment_limit(Bytes input_buffer, Bytes segment_size) {
  if (input_buffer == 0) return segment_size;
  return std::min(segment_size, std::max(input_buffer / kSegmentsPerNetworkBuffer, kSmallestNetworkSegment));
}

/// The smallest such limit over the fabric's network switches: the segment of
/// a path across nodes (`segment_size` where it has none).
Bytes network_segment_size(const TopologySpec& spec, Bytes segment_size);

}  // namespace fabsim::topo
