// Catch2's session runs inside sc_main, so SystemC's own main sets up the
// kernel; main() first silences the banner.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "sim/core/kernel.hpp"

int sc_main(int argc, char** argv) {
  fabsim::core::configure_kernel();
  return Catch::Session().run(argc, argv);
}

int main(int argc, char** argv) {
  fabsim::core::prepare_process_environment();
  return sc_core::sc_elab_and_sim(argc, argv);
}
