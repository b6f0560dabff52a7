#pragma once
// The measurements, as plain data (the CUDA side stays free of JSON).

#include <cstddef>
#include <string>
#include <vector>

namespace harness {

struct Options {
  std::size_t copy_bytes = 256u << 20;      ///< per copy in bandwidth tests
  int repetitions = 5;                      ///< medians are taken over these
  int warmup = 2;
  std::size_t nccl_min_bytes = 8;
  std::size_t nccl_max_bytes = 1u << 30;
  int nccl_warmup = 5;
  int nccl_iterations = 20;
  std::vector<std::string> algorithms{"auto", "Ring", "Tree", "NVLS"};  ///< NCCL_ALGO values; "auto": not set
};

struct PeerResult {
  int source = 0, destination = 0;
  std::string engine;  ///< "copy-engine" or "sm"
  double unidirectional_gbps = 0;
  double bidirectional_gbps = 0;
  double latency_us = 0;  ///< flag ping-pong through peer memory, one way (sm rows only)
};

struct HostResult {
  double host_to_device_gbps = 0, device_to_host_gbps = 0, device_copy_gbps = 0;
  double kernel_launch_us = 0;          ///< per launch, 1000 empty kernels back to back (the launch rate)
  double launch_round_trip_us = 0;      ///< one empty kernel launched and waited for, host clock (the idle launch)
  double host_read_round_trip_us = 0;   ///< one GPU thread's dependent 4-byte reads of pinned host memory, per read
};

struct NcclRow {
  std::size_t bytes = 0, count = 0;
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
};

struct NcclSweep {
  std::string op, algorithm;
  int ranks = 0;
  std::vector<NcclRow> rows;
};

/// Peer copy bandwidth (copy engine and SM kernel, one and both directions)
/// and peer latency for every ordered pair that has peer access; pairs
/// without it go to `skipped`.
std::vector<PeerResult> measure_peers(int gpus, const Options& o, std::vector<std::string>& skipped);
/// Pinned host-device bandwidth, device memory copy, kernel launch latency
/// (back to back and one at a time) and the GPU's read round trip to host memory, on GPU 0.
HostResult measure_host(const Options& o);
/// nccl-tests style sweeps of every collective, per forced algorithm, on all GPUs (one process).
std::vector<NcclSweep> measure_nccl(int gpus, const Options& o, std::vector<std::string>& skipped);

double median(std::vector<double> v);

}  // namespace harness
