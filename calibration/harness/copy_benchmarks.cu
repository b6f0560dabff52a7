// Copy-engine and SM copies between GPUs and with the host, peer latency,
// kernel launch latency. Timed with CUDA events after warm-up; every figure is
// the median of several repetitions; pinned host memory, no managed memory.

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "benchmarks.hpp"
#include "checks.hpp"

namespace harness {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

namespace {

__global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void empty_kernel() {}

/// One thread follows a chain of indices through pinned host memory: each read
/// waits for the one before, so the time per read is the GPU's round trip over
/// PCIe to host memory and back. Volatile: no read is served from the GPU's caches.
__global__ void chase_host_memory(const volatile unsigned* chain, unsigned start, int reads, unsigned* sink) {
  unsigned at = start;
  for (int i = 0; i < reads; ++i) at = chain[at];
  *sink = at;
}

/// One side of the ping-pong: waits for `expect` in its own flag, then writes `expect + 1` into the peer's.
__global__ void ping_pong(volatile int* mine, volatile int* peer, int iterations, bool starts) {
  for (int i = 0; i < iterations; ++i) {
    const int value = 2 * i + (starts ? 0 : 1);
    if (!starts || i > 0) {
      while (*mine < value) {
      }
    }
    *peer = value + 1;
    __threadfence_system();
  }
}

/// Milliseconds `work` takes on `stream`, timed with events.
template <typename Work>
float time_on(cudaStream_t stream, Work work) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  work();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return ms;
}

double gbps(std::size_t bytes, float ms) { return ms > 0 ? static_cast<double>(bytes) / (static_cast<double>(ms) * 1e6) : 0.0; }

}  // namespace

std::vector<PeerResult> measure_peers(int gpus, const Options& o, std::vector<std::string>& skipped) {
  std::vector<PeerResult> out;
  if (gpus < 2) {
    skipped.push_back("peer bandwidth and latency: one GPU only");
    return out;
  }
  std::vector<void*> buffers(gpus), flags(gpus);
  std::vector<cudaStream_t> streams(gpus);
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaMalloc(&buffers[d], 2 * o.copy_bytes));
    CUDA_CHECK(cudaMalloc(&flags[d], sizeof(int)));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
  }
  for (int a = 0; a < gpus; ++a) {
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      int access = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&access, a, b));
      if (!access) {
        skipped.push_back("peer " + std::to_string(a) + "->" + std::to_string(b) + ": no peer access");
        continue;
      }
      CUDA_CHECK(cudaSetDevice(a));
      if (cudaDeviceEnablePeerAccess(b, 0) == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
      CUDA_CHECK(cudaSetDevice(b));
      if (cudaDeviceEnablePeerAccess(a, 0) == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
      auto* src = static_cast<char*>(buffers[a]);
      auto* dst = static_cast<char*>(buffers[b]);
      // Copy engine, one direction then both at once.
      std::vector<double> uni, bi, sm, latency;
      for (int r = 0; r < o.warmup + o.repetitions; ++r) {
        CUDA_CHECK(cudaSetDevice(a));
        const float one = time_on(streams[a], [&] { CUDA_CHECK(cudaMemcpyPeerAsync(dst, b, src, a, o.copy_bytes, streams[a])); });
        const float both = time_on(streams[a], [&] {
          CUDA_CHECK(cudaMemcpyPeerAsync(dst, b, src, a, o.copy_bytes, streams[a]));
          CUDA_CHECK(cudaMemcpyPeerAsync(src + o.copy_bytes, a, dst + o.copy_bytes, b, o.copy_bytes, streams[b]));
          CUDA_CHECK(cudaStreamSynchronize(streams[b]));
        });
        const std::size_t n = o.copy_bytes / sizeof(int4);
        const float kernel = time_on(streams[a], [&] {
          copy_kernel<<<264, 1024, 0, streams[a]>>>(reinterpret_cast<const int4*>(src), reinterpret_cast<int4*>(dst), n);
          CUDA_CHECK(cudaGetLastError());
        });
        // Ping-pong: 1000 round trips through the peers' flags.
        constexpr int kTrips = 1000;
        CUDA_CHECK(cudaMemset(flags[a], 0, sizeof(int)));
        CUDA_CHECK(cudaSetDevice(b));
        CUDA_CHECK(cudaMemset(flags[b], 0, sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaSetDevice(a));
        const float pp = time_on(streams[a], [&] {
          CUDA_CHECK(cudaSetDevice(b));
          ping_pong<<<1, 1, 0, streams[b]>>>(static_cast<int*>(flags[b]), static_cast<int*>(flags[a]), kTrips, false);
          CUDA_CHECK(cudaGetLastError());
          CUDA_CHECK(cudaSetDevice(a));
          ping_pong<<<1, 1, 0, streams[a]>>>(static_cast<int*>(flags[a]), static_cast<int*>(flags[b]), kTrips, true);
          CUDA_CHECK(cudaGetLastError());
        });
        CUDA_CHECK(cudaSetDevice(b));
        CUDA_CHECK(cudaStreamSynchronize(streams[b]));
        if (r < o.warmup) continue;
        uni.push_back(gbps(o.copy_bytes, one));
        bi.push_back(gbps(2 * o.copy_bytes, both));
        sm.push_back(gbps(o.copy_bytes, kernel));
        latency.push_back(static_cast<double>(pp) * 1e3 / (2.0 * kTrips));  // one way, microseconds
      }
      out.push_back({a, b, "copy-engine", median(uni), median(bi), 0});
      out.push_back({a, b, "sm", median(sm), 0, median(latency)});
    }
  }
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaFree(buffers[d]));
    CUDA_CHECK(cudaFree(flags[d]));
    CUDA_CHECK(cudaStreamDestroy(streams[d]));
  }
  return out;
}

HostResult measure_host(const Options& o) {
  CUDA_CHECK(cudaSetDevice(0));
  void *host = nullptr, *device = nullptr;
  CUDA_CHECK(cudaMallocHost(&host, o.copy_bytes));
  CUDA_CHECK(cudaMalloc(&device, 2 * o.copy_bytes));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<double> h2d, d2h, d2d, launch;
  for (int r = 0; r < o.warmup + o.repetitions; ++r) {
    const float up = time_on(s, [&] { CUDA_CHECK(cudaMemcpyAsync(device, host, o.copy_bytes, cudaMemcpyHostToDevice, s)); });
    const float down = time_on(s, [&] { CUDA_CHECK(cudaMemcpyAsync(host, device, o.copy_bytes, cudaMemcpyDeviceToHost, s)); });
    const float copy = time_on(s, [&] {
      CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(device) + o.copy_bytes, device, o.copy_bytes, cudaMemcpyDeviceToDevice, s));
    });
    // Back-to-back empty launches: the launch rate a collective loop sees.
    constexpr int kLaunches = 1000;
    const float launches = time_on(s, [&] {
      for (int i = 0; i < kLaunches; ++i) empty_kernel<<<1, 1, 0, s>>>();
      CUDA_CHECK(cudaGetLastError());
    });
    if (r < o.warmup) continue;
    h2d.push_back(gbps(o.copy_bytes, up));
    d2h.push_back(gbps(o.copy_bytes, down));
    d2d.push_back(gbps(2 * o.copy_bytes, copy));  // read + write
    launch.push_back(static_cast<double>(launches) * 1e3 / kLaunches);
  }
  HostResult result{median(h2d), median(d2h), median(d2d), median(launch), 0, 0};

  // One launch at a time, as an idle GPU sees it: launch, wait, on the host's clock.
  std::vector<double> round_trips;
  for (int i = 0; i < 20 + 200; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(s));
    const auto end = std::chrono::steady_clock::now();
    if (i >= 20) round_trips.push_back(std::chrono::duration<double, std::micro>(end - begin).count());
  }
  result.launch_round_trip_us = median(round_trips);

  // Dependent reads of host memory: a random cycle over 64 MiB, one read per
  // 4 KiB page, each repetition going on where the last stopped, so no read
  // repeats a line (nothing to cache, nothing to prefetch).
  constexpr std::size_t kChainBytes = 64u << 20, kStride = 4096 / sizeof(unsigned);
  constexpr int kReads = 2000;  // (warm-up + repetitions) x reads stays under the 16,384 pages
  unsigned* chain = nullptr;
  unsigned* sink = nullptr;
  CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&chain), kChainBytes, cudaHostAllocMapped));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  const std::size_t pages = kChainBytes / sizeof(unsigned) / kStride;
  std::vector<unsigned> order(pages);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(12345));  // a fixed seed: the same chain every run
  for (std::size_t i = 0; i < pages; ++i)
    chain[order[i] * kStride] = static_cast<unsigned>(order[(i + 1) % pages] * kStride);
  unsigned* chain_on_device = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&chain_on_device), chain, 0));
  std::vector<double> reads;
  for (int r = 0; r < o.warmup + o.repetitions; ++r) {
    const float ms = time_on(s, [&] {
      const std::size_t first = static_cast<std::size_t>(r) * kReads % pages;
      chase_host_memory<<<1, 1, 0, s>>>(chain_on_device, static_cast<unsigned>(order[first] * kStride), kReads, sink);
      CUDA_CHECK(cudaGetLastError());
    });
    if (r >= o.warmup) reads.push_back(static_cast<double>(ms) * 1e3 / kReads);
  }
  result.host_read_round_trip_us = median(reads);
  CUDA_CHECK(cudaFree(sink));
  CUDA_CHECK(cudaFreeHost(chain));

  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(device));
  CUDA_CHECK(cudaFreeHost(host));
  return result;
}

}  // namespace harness
