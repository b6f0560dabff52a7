#pragma once
/// `fabsim calibrate`: fits the parameters measurements determine and writes
/// a calibration profile (fabsim-calibration/1) whose "catalogue_patch"
/// replaces the fitted catalogue values, each with the data that fixed it.
///
/// Fitted per GPU model and its NVLink link model:
/// - the link efficiency, from the bandwidth-bound rows (>= 64 MiB) of the
///   collective sweeps (measured / predicted busbw, median), else from
///   peer-to-peer copy bandwidth;
/// - launch overhead, LL step latency and reduce latency, by linear least
///   squares over the latency-bound rows (<= 4 KiB), with each parameter's
///   effect on every row measured by simulating it perturbed (the model is
///   linear in them there), lightly regularised toward the catalogue when the
///   rows cannot tell the parameters apart;
/// - the PCIe link efficiency, from pinned host-device copy rates (harness).
/// Not fitted: per-hop link latency (in one node every step crosses one hop,
/// so collectives cannot tell it from the step latency, and the harness's
/// flag ping-pong carries the poll and fence costs the step latency already
/// has), LL128 and Simple step latencies (NCCL's own values; fitting them
/// improved fitted rows and worsened held-out ones).
///
/// Fitted per multi-node topology (its sweeps span nodes), in place of the
/// NVLink values, which single-node sweeps fix:
/// - the rate: the network link's efficiency, from the time per added byte
///   between successive sizes from 1 GiB (fixed per-call costs cancel);
/// - the NIC's net_call_latency (a cost paid once per call across the
///   network), by bisection until the latency-bound rows' (<= 4 KiB) median
///   time error is zero. Not the per-step net_latency: a per-step cost large
///   enough for TCPXO's 123 us floor stalls every FIFO credit loop and made
///   a held-out 64 MiB all-gather 2.6x slow.
/// Every prediction is a fabsim simulation run in a child process.

#include <iosfwd>
#include <string>
#include <vector>

namespace fabsim::cli {

struct CalibrateOptions {
  std::vector<std::string> measurements;
  std::string topology;      ///< used for every sweep when set
  std::string topology_dir;  ///< stock topologies, chosen by GPU model otherwise
  std::string output;
  std::string self;
  std::string pcie_link = "pcie-gen5-x16";  ///< the GPUs' PCIe link model, fitted from host transfers
  bool latencies_only = false;  ///< fit launch overhead, LL step and reduce latency only (`--fit latencies`)
  std::vector<std::string> datasets;  ///< fit only these data sets (`--dataset`); empty: every one
};

int run_calibrate(const CalibrateOptions& options, std::ostream& out);

}  // namespace fabsim::cli
