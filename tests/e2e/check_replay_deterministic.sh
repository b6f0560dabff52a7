#!/bin/sh
# check_replay_deterministic.sh FABSIM TOPOLOGY TRACE: two replays give byte-identical JSON, tables and timelines.
set -e
d=$(mktemp -d)
for i in 1 2; do
  # The same command line both times: the JSON's provenance records it.
  "$1" replay -t "$2" "$3" --model flow --format json --timeline "$d/timeline.json" >"$d/json$i" 2>/dev/null
  mv "$d/timeline.json" "$d/timeline$i.json"
  "$1" replay -t "$2" "$3" >"$d/table$i" 2>/dev/null
done
cmp "$d/json1" "$d/json2"
cmp "$d/timeline1.json" "$d/timeline2.json"
cmp "$d/table1" "$d/table2"
rm -rf "$d"
echo "identical"
