#include "sim/cli/mpi_world.hpp"

#include <cstdlib>

#ifdef FABSIM_WITH_MPI
#include <mpi.h>
#endif

namespace fabsim::cli {

namespace {
[[maybe_unused]] bool launched_by_mpi() {
  // Open MPI's and the PMI launchers' environment (MPICH, Slurm).
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}
}  // namespace

bool MpiWorld::available() {
#ifdef FABSIM_WITH_MPI
  return true;
#else
  return false;
#endif
}

MpiWorld::MpiWorld() {
#ifdef FABSIM_WITH_MPI
  if (!launched_by_mpi()) return;
  MPI_Init(nullptr, nullptr);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#endif
}

MpiWorld::~MpiWorld() {
#ifdef FABSIM_WITH_MPI
  if (initialised_) MPI_Finalize();
#endif
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  if (!initialised_) return {mine};
  std::vector<std::string> out;
#ifdef FABSIM_WITH_MPI
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
#endif
  return out;
}

}  // namespace fabsim::cli
