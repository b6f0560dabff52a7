#!/bin/sh
# expect_exit.sh CODE REGEX COMMAND...: passes when COMMAND exits with CODE,
# prints nothing on stdout, and its stderr matches REGEX on a line starting
# with "error: ".
code=$1; regex=$2; shift 2
err=$(mktemp); out=$(mktemp)
"$@" >"$out" 2>"$err"; rc=$?
status=0
if [ "$rc" -ne "$code" ]; then echo "exit code $rc, expected $code"; status=1; fi
if ! grep -E "^error: .*$regex" "$err" >/dev/null; then echo "stderr does not match '$regex'"; status=1; fi
if [ -s "$out" ]; then echo "stdout was not empty"; status=1; fi
echo "--- stderr:"; cat "$err"
rm -f "$err" "$out"
exit $status
