#pragma once
/// The MPI job this process belongs to, when it was started by mpirun and
/// fabsim was built with MPI; otherwise a world of one. Only `fabsim sweep`
/// uses it: the points are split over the ranks and gathered on rank 0.

#include <string>
#include <vector>

namespace fabsim::cli {

class MpiWorld {
 public:
  /// Initialises MPI only when an MPI launcher started this process.
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Every rank's string, in rank order, on rank 0 (empty elsewhere).
  std::vector<std::string> gather(const std::string& mine) const;

  /// Whether this build can join an MPI job at all.
  static bool available();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

}  // namespace fabsim::cli
