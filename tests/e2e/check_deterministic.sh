#!/bin/sh
# check_deterministic.sh FABSIM SCENARIO: two runs give byte-identical JSON and tables.
set -e
a=$(mktemp); b=$(mktemp)
"$1" run "$2" --format json --links >"$a" 2>/dev/null
"$1" run "$2" --format json --links >"$b" 2>/dev/null
cmp "$a" "$b"
"$1" run "$2" >"$a" 2>/dev/null
"$1" run "$2" >"$b" 2>/dev/null
cmp "$a" "$b"
rm -f "$a" "$b"
echo "identical"
