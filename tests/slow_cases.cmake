# Test cases labelled slow one by one: ctest includes this file after the
# Catch2 discovery files, so their names exist by then. Each repeats, at a
# scale that takes 30 s to 3 min under the sanitizer build, code paths that
# smaller cases run there too: the sanitizer pass (ctest -LE slow) skips them,
# the release pass runs them. A name that no longer exists stops ctest.
set(fabsim_slow_cases
  "e2e_tests:model auto on a replay: the 8-GPU DDP step at segment level, the NVL72 MoE trace at flow level"
  "e2e_tests:model auto takes the segment level within its budget and the flow level above it"
  "e2e_tests:a ring over nodes of several GPUs pays NCCL's NET Ring row per network step, NVLSTree its own row"
  "e2e_tests:CollNet across two HGX nodes: the segment and flow models agree, and its intra-node traffic keeps it near the ring"
  "e2e_tests:nccl-test with NCCL 2.26.2 chooses as NCCL 2.26 did on two HGX H100 nodes: NVLSTree from 1 MiB where 2.30 runs Tree LL128 to 2 MiB"
  "e2e_tests:bandwidth-bound results converge as segments shrink"
  "unit_tests:ib-fat-tree-98k: 98,304 GPUs on three tiers of 144-port switches, 1,536 + 1,536 + 1,024, 1:1 at every tier")
# (The discovery files list each binary's cases in <binary>_TESTS.)
foreach(name IN LISTS fabsim_slow_cases)
  string(REGEX REPLACE ":.*" "" binary "${name}")
  if(NOT DEFINED ${binary}_TESTS)
    continue()  # not built: its discovery file added a failing <binary>_NOT_BUILT test instead
  endif()
  list(FIND ${binary}_TESTS "${name}" index)
  if(index EQUAL -1)
    message(FATAL_ERROR "tests/slow_cases.cmake: no test case named '${name}' (renamed? update the list)")
  endif()
  string(REGEX REPLACE "_tests$" "" layer "${binary}")
  set_tests_properties("${name}" PROPERTIES LABELS "${layer};slow")
endforeach()
