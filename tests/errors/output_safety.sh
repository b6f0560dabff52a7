#!/bin/sh
# output_safety.sh FABSIM ROOT CASE: an output that names an input, or that
# cannot be written, is refused before any work (exit 2, one message, empty
# stdout) and the input is left byte for byte as it was.
fabsim=$1; root=$2; case_name=$3
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
h100="$root/topologies/hgx-h100.json"
cp "$root/tests/data/traces/native/dp8_ddp_bucketed_allreduce.json" "$dir/T.json"
cp "$root/configs/measurements/published-measurements.json" "$dir/M.json"
cp "$root/tests/data/traces/real/nccl_debug_info_4rank.log" "$dir/L.log"
before=$(cat "$dir/T.json" "$dir/M.json" "$dir/L.log" | md5sum)
expect="$root/tests/errors/expect_exit.sh"
case "$case_name" in
  calibrate_onto_its_input) sh "$expect" 2 "-o: .*is also an input" "$fabsim" calibrate -m "$dir/M.json" -o "$dir/M.json" ;;
  calibrate_to_dev_full) sh "$expect" 2 "-o: '/dev/full' is not a regular file" "$fabsim" calibrate -m "$dir/M.json" -o /dev/full ;;
  calibrate_to_missing_dir) sh "$expect" 2 "-o: .*the directory '/proc/x' does not exist" "$fabsim" calibrate -m "$dir/M.json" -o /proc/x/p.json ;;
  import_onto_its_input) sh "$expect" 2 "-o: .*is also an input" "$fabsim" trace import --from nccl-log "$dir/L.log" -o "$dir/L.log" ;;
  import_to_dev_full) sh "$expect" 2 "-o: '/dev/full' is not a regular file" "$fabsim" trace import --from nccl-log "$dir/L.log" -o /dev/full ;;
  timeline_onto_its_input) sh "$expect" 2 "--timeline: .*is also an input" "$fabsim" replay -t "$h100" "$dir/T.json" --timeline "$dir/T.json" ;;
  timeline_unwritable) sh "$expect" 2 "--timeline: '/proc/x' cannot be written" "$fabsim" replay -t "$h100" "$dir/T.json" --timeline /proc/x ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
rc=$?
after=$(cat "$dir/T.json" "$dir/M.json" "$dir/L.log" | md5sum)
if [ "$before" != "$after" ]; then echo "an input changed"; exit 1; fi
leftovers=$(ls "$dir" | grep -c fabsim-tmp)
if [ "$leftovers" -ne 0 ]; then echo "temporary files left behind"; exit 1; fi
exit $rc
