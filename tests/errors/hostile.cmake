# Hostile inputs (tests/errors/hostile/): each once crashed, hung, ran away or
# printed a figure; each must now be one clear error with exit code 2.
set(HOSTILE ${CMAKE_SOURCE_DIR}/tests/errors/hostile)
set(H100 ${CMAKE_SOURCE_DIR}/topologies/hgx-h100.json)
set(DP8 ${CMAKE_SOURCE_DIR}/tests/data/traces/native/dp8_ddp_bucketed_allreduce.json)

# JSON numbers and keys
fabsim_error_test(hostile_count_overflow "count_overflow.json: /links/0/count: a number too large for a double"
  topo check ${HOSTILE}/count_overflow.json)
fabsim_error_test(hostile_count_30_digits "count_30_digits.json: /links/0/count: expected an integer"
  topo check ${HOSTILE}/count_30_digits.json)
fabsim_error_test(hostile_count_2pow31 "count_2pow31.json: /links/0/count: 2147483648 is out of range"
  topo check ${HOSTILE}/count_2pow31.json)
fabsim_error_test(hostile_count_2pow32_plus4 "count_2pow32_plus4.json: /links/0/count: 4294967300 is out of range"
  nccl-test -t ${HOSTILE}/count_2pow32_plus4.json)
fabsim_error_test(hostile_duplicate_key "duplicate_key.json: /name: duplicate key 'name'"
  topo check ${HOSTILE}/duplicate_key.json)
fabsim_error_test(hostile_directory_as_input "topologies: is a directory"
  topo check ${CMAKE_SOURCE_DIR}/topologies)
# /dev/zero never ends: it was read until memory ran out.
fabsim_error_test(hostile_device_as_topology "/dev/zero: is a device"
  nccl-test -t /dev/zero -b 8 -e 8)
fabsim_error_test(hostile_device_as_trace "/dev/zero: is a device"
  replay /dev/zero -t ${H100})
# Units
fabsim_error_test(hostile_latency_1e308s "latency_1e308s.json: /links/0/latency: '1e308 s' is too long"
  nccl-test -t ${HOSTILE}/latency_1e308s.json)
fabsim_error_test(hostile_bandwidth_1e-308 "bandwidth_1e-308.json: /links/0/bandwidth: '1e-308 GB/s' is out of range"
  nccl-test -t ${HOSTILE}/bandwidth_1e-308.json)
fabsim_error_test(hostile_bytes_fraction "bytes_fraction.json: /workload/min_bytes: '1.5 B' is not a whole number of bytes"
  run ${HOSTILE}/bytes_fraction.json)
fabsim_error_test(hostile_drift_sd_1e30us "catalogue_patch\\): /gpus/h100-sxm/channel_drift_sd/value: '1e30 us' is too long"
  nccl-test -t ${H100} --calibration ${HOSTILE}/drift_sd_1e30us.json)
fabsim_error_test(hostile_input_buffer_zero "/switches/nvswitch-gen3/input_buffer/value: expected a size > 0 bytes"
  nccl-test -t ${H100} --calibration ${HOSTILE}/input_buffer_zero.json)
fabsim_error_test(hostile_tree_network_efficiency_above_one "/gpus/h100-sxm/nvls/network_efficiency_beyond_two_nodes: expected a value in \\(0, 1\\]"
  nccl-test -t ${H100} --calibration ${HOSTILE}/tree_network_efficiency_above_one.json)
fabsim_error_test(hostile_ring_channels_1000 "/gpus/h100-sxm/ring_channels/value: 1000 is out of range"
  nccl-test -t ${H100} --calibration ${HOSTILE}/ring_channels_1000.json)
# Generated fabrics are sized before they are built
fabsim_error_test(hostile_gpus_2pow32_plus8 "/generate/node/gpus: 4294967304 is out of range"
  topo check ${HOSTILE}/gpus_2pow32_plus8.json)
fabsim_error_test(hostile_mesh_million_gpus "/generate/node/gpus: 1000000 is out of range"
  topo check ${HOSTILE}/mesh_million_gpus.json)
fabsim_error_test(hostile_fat_tree_billion_gpus "/generate/nodes: 125000000 is out of range"
  topo check ${HOSTILE}/fat_tree_billion_gpus.json)
fabsim_error_test(hostile_fat_tree_million_nodes "/generate/nodes: 1000000 is out of range"
  topo check ${HOSTILE}/fat_tree_million_nodes.json)
# Traces
fabsim_error_test(hostile_world_2pow31_plus2 "/world_size: 2147483650 is out of range"
  trace check ${HOSTILE}/world_2pow31_plus2.json)
fabsim_error_test(hostile_world_2pow32_plus2 "/world_size: 4294967298 is out of range"
  replay -t ${H100} ${HOSTILE}/world_2pow32_plus2.json)
fabsim_error_test(hostile_count_f64_2pow62 "/programs/0/ops/0/count: 4611686018427387904 is out of range"
  trace check ${HOSTILE}/count_f64_2pow62.json)
fabsim_error_test(hostile_delay_max "/programs/0/ops/0/delay_ns: 9223372036854775807 is out of range"
  replay -t ${H100} ${HOSTILE}/delay_max.json)
fabsim_error_test(hostile_duration_max "/programs/0/ops/0/duration_ns: 9223372036854775807 is out of range"
  replay -t ${H100} ${HOSTILE}/duration_max.json)
fabsim_error_test(hostile_repeat_billion "/programs/0/ops/0/repeat: 1000000000 is out of range"
  replay -t ${H100} ${HOSTILE}/repeat_billion.json)
fabsim_error_test(hostile_iterations_billion "/iterations: 1000000000 is out of range"
  replay -t ${H100} ${HOSTILE}/iterations_billion.json)
fabsim_error_test(hostile_iterations_unroll "/iterations: the trace unrolls to 2e\\+09 op instances"
  replay -t ${H100} ${HOSTILE}/iterations_unroll.json)
fabsim_error_test(hostile_nccl_log_huge_count "nccl_log_huge_count.log: line 57: the number '99999999999999999999999' is out of range"
  trace import --from nccl-log ${HOSTILE}/nccl_log_huge_count.log -o nowhere.json)
# Line 3 is its Init START line, read since NCCL 2.18 prints the same fields there.
fabsim_error_test(hostile_nccl_log_huge_rank "nccl_log_huge_rank.log: line 3: the number '99999999999' is out of range"
  trace import --from nccl-log ${HOSTILE}/nccl_log_huge_rank.log -o nowhere.json)
fabsim_error_test(hostile_chakra_huge_size "the attribute value \"99999999999999999999999\" is not a 64-bit integer"
  trace import --from chakra ${HOSTILE}/chakra_huge_size.json -o nowhere.json)
# Command-line values
fabsim_error_test(hostile_size_2pow62 "-b: '4611686018427387904' is not a size"
  nccl-test -t ${H100} -b 4611686018427387904 -e 16T)
fabsim_error_test(hostile_segment_size_1 "segment level, more than fabsim runs.*--model flow"
  nccl-test -t ${H100} -b 64M -e 64M --segment-size 1 --model segment)
fabsim_error_test(hostile_progress_mode "--progress: unknown progress mode 'yes' \\(expected auto, always or never\\)"
  nccl-test -t ${H100} --progress yes)
fabsim_error_test(hostile_gpus_zero "-g: expected 1 to 131072 GPUs, found 0"
  nccl-test -t ${H100} -g 0)
fabsim_error_test(hostile_size_not_element_multiple "-b: sizes 6 and 6 must be multiples of the element size"
  nccl-test -t ${H100} -b 6 -e 6)
fabsim_error_test(hostile_factor_in_scenario "factor_in_scenario.json: /workload/factor: expected a step factor > 1"
  run ${HOSTILE}/factor_in_scenario.json)
fabsim_error_test(hostile_nvls_forced_ll "--proto: nvls runs the Simple protocol only, not LL"
  nccl-test -t ${H100} --algo nvls --proto LL -b 64M -e 64M)
# Point-to-point ops run NCCL's P2P schedule: a forced algorithm or protocol would be silently ignored.
fabsim_error_test(hostile_sendrecv_forced_algo "--algo: sendrecv runs point to point \\(NCCL's P2P schedule\\), not with a collective algorithm"
  nccl-test -t ${H100} --op sendrecv --algo ring -b 1M -e 1M)
fabsim_error_test(hostile_alltoall_forced_proto "--proto: alltoall takes its protocol from the size as NCCL's P2P does"
  nccl-test -t ${H100} --op alltoall --proto LL128 -b 1M -e 1M)
# Settings that would change nothing are refused rather than silently dropped.
fabsim_error_test(hostile_segment_size_with_flow "--segment-size: a segment-level setting, and the flow model moves no segments"
  nccl-test -t ${H100} -b 1M -e 1M --model flow --segment-size 1M)
fabsim_error_test(hostile_replay_segment_size_with_flow "--segment-size: a segment-level setting, and the flow model moves no segments"
  replay -t ${H100} ${DP8} --model flow --segment-size 1M)
fabsim_error_test(hostile_detection_without_timed_fault "--fault-detection: sets how long a fault that strikes during the run"
  nccl-test -t ${H100} -b 1M -e 1M --fault gpu0~nvswitch0=0.5 --fault-detection 1ms)
fabsim_error_test(hostile_replay_whatif_detection_without_fault "--fault-detection: sets how long a fault that strikes during the run"
  replay -t ${H100} ${DP8} --whatif links --fault-detection 1ms)
fabsim_error_test(hostile_scenario_detection_without_timed_fault "detection_without_timed_fault.json: /fault_detection: sets how long"
  run ${HOSTILE}/detection_without_timed_fault.json)
fabsim_error_test(hostile_scenario_segment_size_with_flow "segment_size_with_flow.json: /parameters/segment_size: a segment-level setting"
  run ${HOSTILE}/segment_size_with_flow.json)
fabsim_error_test(hostile_straggler_inf "--straggler: '0=inf' is not \\[JOB:\\]RANK=FACTOR with a finite number"
  replay -t ${H100} ${DP8} --straggler 0=inf)
fabsim_error_test(hostile_start_delay_1e30 "--start-delay: '0=1e30': the delay must be from 0"
  replay -t ${H100} ${DP8} --start-delay 0=1e30)
fabsim_error_test(hostile_placement_huge "--job: '0-2000000000' is not a GPU placement"
  replay -t ${H100} --job ${DP8}@0-2000000000)
# Scenarios, sweeps, baselines, measurements: referenced files and checks
fabsim_error_test(hostile_missing_topology "missing_topology_scenario.json: /topology: '.*no-such-topology.json' is not a readable file"
  run ${HOSTILE}/missing_topology_scenario.json)
fabsim_error_test(hostile_sweep_empty_pointer "sweep_empty_pointer.json: /axes/0/path: '' is not a JSON pointer"
  sweep ${HOSTILE}/sweep_empty_pointer.json)
fabsim_error_test(hostile_sweep_axis_twice "sweep_axis_twice.json: /axes/1/path: '/workload/gpus' is already the path of axis 0"
  sweep ${HOSTILE}/sweep_axis_twice.json)
fabsim_error_test(hostile_sweep_out_is_file "-o: '/dev/null' exists and is not a directory"
  sweep ${CMAKE_SOURCE_DIR}/configs/sweeps/hgx-h100-gpus-algorithms.json -o /dev/null)
fabsim_error_test(hostile_sweep_out_unwritable "-o: cannot create the directory '/proc/x'"
  sweep ${CMAKE_SOURCE_DIR}/configs/sweeps/hgx-h100-gpus-algorithms.json -o /proc/x)
fabsim_error_test(hostile_sweep_jobs_zero "-j: expected 1 to 256 processes at a time, found 0"
  sweep ${CMAKE_SOURCE_DIR}/configs/sweeps/hgx-h100-gpus-algorithms.json -j 0)
fabsim_error_test(hostile_sweep_jobs_1000 "-j: expected 1 to 256 processes at a time, found 1000"
  sweep ${CMAKE_SOURCE_DIR}/configs/sweeps/hgx-h100-gpus-algorithms.json -j 1000)
fabsim_error_test(hostile_baseline_nan "baseline_nan.json: /scenarios/0/rows/0/time_us: expected a number, found the string \"NaN\""
  regress ${HOSTILE}/baseline_nan.json)
fabsim_error_test(hostile_baseline_negative_tolerance "/scenarios/0/tolerance/time_us: expected a relative tolerance from 0 to 10"
  regress ${HOSTILE}/baseline_negative_tolerance.json)
fabsim_error_test(hostile_baseline_missing_scenario "/scenarios/0/scenario: '.*no-such-scenario.json' is not a readable file"
  regress ${HOSTILE}/baseline_missing_scenario.json)
fabsim_error_test(hostile_validate_unknown_collective "/collective_datasets/0: this run's input is refused: .*unknown collective 'all_mix'"
  validate -m ${HOSTILE}/measurements_unknown_collective.json)
fabsim_error_test(hostile_validate_99_gpus "/collective_datasets/0: this run's input is refused: .*asked for 99 GPUs"
  validate -m ${HOSTILE}/measurements_99_gpus.json)
fabsim_error_test(hostile_validate_nccl_choice_nvlstree_ll "measurements_nccl_choice_ll_nvls.json: /collective_datasets/0/rows/1/nccl_choice: expected Algorithm/Protocol"
  validate -m ${HOSTILE}/measurements_nccl_choice_ll_nvls.json)
fabsim_error_test(hostile_calibrate_nccl_choice_nvlstree_ll "measurements_nccl_choice_ll_nvls.json: /collective_datasets/0/rows/1/nccl_choice: expected Algorithm/Protocol"
  calibrate -m ${HOSTILE}/measurements_nccl_choice_ll_nvls.json -o nowhere.json)
fabsim_error_test(hostile_validate_garbage_calibration "bad_scenario.json: /format"
  validate -m ${CMAKE_SOURCE_DIR}/configs/measurements/published-measurements.json --calibration ${ERR}/bad_scenario.json)

# Outputs: never onto an input, never a silent failed write.
foreach(case calibrate_onto_its_input calibrate_to_dev_full calibrate_to_missing_dir import_onto_its_input import_to_dev_full
             timeline_onto_its_input timeline_unwritable)
  add_test(NAME "errors: output ${case}"
           COMMAND ${CMAKE_SOURCE_DIR}/tests/errors/output_safety.sh $<TARGET_FILE:fabsim> ${CMAKE_SOURCE_DIR} ${case})
endforeach()

# Found by fuzzing (tests/fuzz/regressions/): each became a clear error.
fabsim_error_test_count(fuzz_nccl_tests_without_test_name 4 "nccl_tests_without_test_name.txt: line [0-9]+: 'Collective test starting:' names no test"
  calibrate -m ${HOSTILE}/nccl_tests_without_test_name.txt -o nowhere.json)

fabsim_error_test(hostile_validate_data_set_not_object "measurements_not_object.json: /collective_datasets/0: expected a data set object, found number"
  validate -m ${HOSTILE}/measurements_not_object.json)
fabsim_error_test(hostile_alltoall_flows "an all-to-all of 4096 ranks holds about 1.7e\\+07 flows at flow level, more than fabsim runs in about a minute"
  nccl-test -t ${CMAKE_SOURCE_DIR}/topologies/ib-fat-tree-16k.json -g 4096 --op alltoall -b 1G -e 1G --model flow)
fabsim_error_test(hostile_replay_nvls_forced_ll "--proto: nvls runs the Simple protocol only, not LL"
  replay -t ${H100} ${DP8} --algo nvls --proto LL)
fabsim_error_test(fuzz_parameter_without_value "/gpus/h100-sxm/launch_overhead: missing required key 'value'"
  nccl-test -t ${H100} --calibration ${HOSTILE}/parameter_without_value.json)
fabsim_error_test(fuzz_kineto_number_for_string "number_for_string.json: the input covers 1 of the 4 ranks its communicators name"
  trace import --from kineto ${CMAKE_SOURCE_DIR}/tests/fuzz/regressions/kineto/number_for_string.json -o nowhere.json)
fabsim_error_test(fuzz_chakra_number_object "number_object.json: is neither Chakra JSON \\(objects starting with '{'\\) nor a Chakra .et protobuf"
  trace import --from chakra ${CMAKE_SOURCE_DIR}/tests/fuzz/regressions/chakra/number_object.json -o nowhere.json)
fabsim_error_test_count(fuzz_measurements_size_1e63 20 "size_1e63.txt: line 19: expected a result row"
  calibrate -m ${CMAKE_SOURCE_DIR}/tests/fuzz/regressions/measurements/size_1e63.txt -o nowhere.json)
fabsim_error_test(fuzz_nccl_log_tuning_algo_not_utf8 "-o: nowhere.json was written but does not pass `fabsim trace check`"
  trace import --from nccl-log ${CMAKE_SOURCE_DIR}/tests/fuzz/regressions/nccl_log/tuning_algo_not_utf8.log -o nowhere.json)
fabsim_error_test(calibrate_unknown_dataset "command line: --dataset: no data set 'no_such_run' in the measurements given"
  calibrate -m ${CMAKE_SOURCE_DIR}/configs/measurements/published-measurements.json --dataset no_such_run -o nowhere.json)
fabsim_error_test(calibrate_multi_node_without_network "hgx-h100.json: /devices: a multi-node sweep fits the network: this topology has no NIC or no network link"
  calibrate -m ${CMAKE_SOURCE_DIR}/tests/errors/two_host_all_reduce.txt --topology ${H100} -o nowhere.json)
# NCCL releases: a tuner fabsim has not read is refused, not replaced by another
fabsim_error_test(hostile_nccl_version_too_old "--nccl-version: NCCL 2.18.6 predates 2.19.1"
  nccl-test -t ${H100} --nccl-version 2.18.6)
fabsim_error_test(hostile_nccl_version_not_a_release "--nccl-version: 'v2.26' is not an NCCL release"
  nccl-test -t ${H100} --nccl-version v2.26)
fabsim_error_test(hostile_replay_nccl_version_too_old "--nccl-version: NCCL 2.3.0 predates 2.19.1"
  replay -t ${H100} ${DP8} --nccl-version 2.3)
fabsim_error_test(hostile_scenario_nccl_version_too_old "nccl_version_1_0.json: /workload/nccl_version: NCCL 1.0.0 predates 2.19.1"
  run ${HOSTILE}/nccl_version_1_0.json)
fabsim_error_test(hostile_scenario_nccl_version_word "nccl_version_word.json: /workload/nccl_version: 'latest' is not an NCCL release"
  run ${HOSTILE}/nccl_version_word.json)
