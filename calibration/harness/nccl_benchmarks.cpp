// nccl-tests style sweeps in one process over every GPU (ncclCommInitAll):
// warm-up, then back-to-back iterations timed with CUDA events per rank, the
// mean over ranks as nccl-tests prints it, busbw with nccl-tests' factors.
// Each NCCL_ALGO value gets fresh communicators; what NCCL refuses is skipped.

#include <cstdlib>
#include <functional>

#include "benchmarks.hpp"
#include "checks.hpp"

namespace harness {

namespace {


/// busbw / algbw, as nccl-tests defines it.
double bus_factor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return static_cast<double>(n - 1) / n;
  return 1.0;  // broadcast, reduce, sendrecv
}

/// Elements each rank passes to NCCL for an nccl-tests size (float).
std::size_t count_for(const std::string& op, std::size_t bytes, int n) {
  const std::size_t elements = bytes / sizeof(float);
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return elements / static_cast<std::size_t>(n);
  return elements;
}

}  // namespace

std::vector<NcclSweep> measure_nccl(int gpus, const Options& o, std::vector<std::string>& skipped) {
  std::vector<NcclSweep> out;
  std::vector<int> devices(gpus);
  for (int d = 0; d < gpus; ++d) devices[d] = d;
  std::vector<void*> send(gpus), recv(gpus);
  std::vector<cudaStream_t> streams(gpus);
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaMalloc(&send[d], o.nccl_max_bytes));
    CUDA_CHECK(cudaMalloc(&recv[d], o.nccl_max_bytes));
    CUDA_CHECK(cudaMemset(send[d], 0, o.nccl_max_bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
  }
  const std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"};
  for (const auto& algo : o.algorithms) {
    if (algo == "auto") unsetenv("NCCL_ALGO");
    else setenv("NCCL_ALGO", algo.c_str(), 1);
    std::vector<ncclComm_t> comms(gpus);
    try {
      NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, devices.data()));
    } catch (const HarnessError& e) {
      skipped.push_back("NCCL_ALGO=" + algo + ": " + e.what());
      continue;
    }
    for (const auto& op : ops) {
      // One call of `op` on every rank, as one NCCL group.
      auto launch = [&](std::size_t count) {
        NCCL_CHECK(ncclGroupStart());
        for (int r = 0; r < gpus; ++r) {
          CUDA_CHECK(cudaSetDevice(r));
          if (op == "all_reduce") NCCL_CHECK(ncclAllReduce(send[r], recv[r], count, ncclFloat, ncclSum, comms[r], streams[r]));
          else if (op == "all_gather") NCCL_CHECK(ncclAllGather(send[r], recv[r], count, ncclFloat, comms[r], streams[r]));
          else if (op == "reduce_scatter") NCCL_CHECK(ncclReduceScatter(send[r], recv[r], count, ncclFloat, ncclSum, comms[r], streams[r]));
          else if (op == "broadcast") NCCL_CHECK(ncclBroadcast(send[r], recv[r], count, ncclFloat, 0, comms[r], streams[r]));
          else if (op == "reduce") NCCL_CHECK(ncclReduce(send[r], recv[r], count, ncclFloat, ncclSum, 0, comms[r], streams[r]));
          else if (op == "alltoall") {
            for (int p = 0; p < gpus; ++p) {
              NCCL_CHECK(ncclSend(static_cast<float*>(send[r]) + p * count, count, ncclFloat, p, comms[r], streams[r]));
              NCCL_CHECK(ncclRecv(static_cast<float*>(recv[r]) + p * count, count, ncclFloat, p, comms[r], streams[r]));
            }
          } else {  // sendrecv: the ring shift
            NCCL_CHECK(ncclSend(send[r], count, ncclFloat, (r + 1) % gpus, comms[r], streams[r]));
            NCCL_CHECK(ncclRecv(recv[r], count, ncclFloat, (r + gpus - 1) % gpus, comms[r], streams[r]));
          }
        }
        NCCL_CHECK(ncclGroupEnd());
      };
      NcclSweep sweep{op, algo, gpus, {}};
      try {
        for (std::size_t bytes = o.nccl_min_bytes; bytes <= o.nccl_max_bytes; bytes *= 2) {
          const std::size_t count = count_for(op, bytes, gpus);
          for (int i = 0; i < o.nccl_warmup; ++i) launch(count);
          std::vector<cudaEvent_t> start(gpus), stop(gpus);
          for (int r = 0; r < gpus; ++r) {
            CUDA_CHECK(cudaSetDevice(r));
            CUDA_CHECK(cudaStreamSynchronize(streams[r]));
            CUDA_CHECK(cudaEventCreate(&start[r]));
            CUDA_CHECK(cudaEventCreate(&stop[r]));
            CUDA_CHECK(cudaEventRecord(start[r], streams[r]));
          }
          for (int i = 0; i < o.nccl_iterations; ++i) launch(count);
          double total_ms = 0;
          for (int r = 0; r < gpus; ++r) {
            CUDA_CHECK(cudaSetDevice(r));
            CUDA_CHECK(cudaEventRecord(stop[r], streams[r]));
          }
          for (int r = 0; r < gpus; ++r) {
            CUDA_CHECK(cudaSetDevice(r));
            CUDA_CHECK(cudaEventSynchronize(stop[r]));
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start[r], stop[r]));
            total_ms += ms;
            CUDA_CHECK(cudaEventDestroy(start[r]));
            CUDA_CHECK(cudaEventDestroy(stop[r]));
          }
          NcclRow row;
          row.bytes = bytes;
          row.count = count;
          row.time_us = total_ms / gpus / o.nccl_iterations * 1e3;
          row.algbw_gbps = static_cast<double>(bytes) / (row.time_us * 1e3);
          row.busbw_gbps = row.algbw_gbps * bus_factor(op, gpus);
          sweep.rows.push_back(row);
        }
        out.push_back(std::move(sweep));
      } catch (const HarnessError& e) {
        skipped.push_back(op + " with NCCL_ALGO=" + algo + ": " + e.what());
        for (int r = 0; r < gpus; ++r) {
          cudaSetDevice(r);
          cudaStreamSynchronize(streams[r]);
        }
        cudaGetLastError();
      }
    }
    for (auto c : comms) ncclCommDestroy(c);
  }
  unsetenv("NCCL_ALGO");
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaFree(send[d]));
    CUDA_CHECK(cudaFree(recv[d]));
    CUDA_CHECK(cudaStreamDestroy(streams[d]));
  }
  return out;
}

}  // namespace harness
