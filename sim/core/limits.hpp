#pragma once
/// The largest sizes, counts and times fabsim accepts, checked where they are
/// read so that nothing overflows, wraps or runs away. Each is far above any
/// real job and keeps every product fabsim forms in 64 bits (bytes x ranks,
/// time x repeats). The README lists them under "Input limits".

#include <cstdint>

namespace fabsim::core {

/// Ranks of a trace, GPUs of a topology or a run (2^17 = 131,072).
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 17;
/// Devices of a topology, GPUs, NICs and switches together.
inline constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;
/// Links of one bundle ("count").
inline constexpr std::int64_t kMaxLinksPerBundle = 1024;
/// Links of a whole topology, bundles counted link by link.
inline constexpr std::int64_t kMaxLinks = std::int64_t{1} << 23;
/// Bytes of one operation or message (2^44 = 16 TiB): times kMaxGpus still fits 2^63.
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 44;
/// One duration or delay, in nanoseconds (10^15 ns = 11.6 days).
inline constexpr std::int64_t kMaxDurationNs = 1'000'000'000'000'000;
/// Simulated time of a whole run, in picoseconds (10^18 ps = 11.6 days).
inline constexpr std::uint64_t kMaxSimulatedPs = 1'000'000'000'000'000'000ULL;
/// Op repeats, trace iterations.
inline constexpr std::int64_t kMaxRepeats = 1'000'000;
/// Op instances a replay may unroll (ops x repeats x iterations, over all ranks).
inline constexpr std::int64_t kMaxOpInstances = 200'000'000;
/// Rows of one nccl-test sweep.
inline constexpr std::int64_t kMaxSweepRows = 1'000;
/// NCCL channels of one collective (NCCL's MAXCHANNELS is 64).
inline constexpr std::int64_t kMaxChannels = 64;
/// Bandwidths: below 1 B/s or above 10^15 B/s (1 PB/s) is not a link.
inline constexpr double kMinBandwidth = 1.0;
inline constexpr double kMaxBandwidth = 1e15;

}  // namespace fabsim::core
