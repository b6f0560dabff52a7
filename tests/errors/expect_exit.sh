#!/bin/sh
# expect_exit.sh CODE REGEX COMMAND...: passes when COMMAND exits with CODE,
# prints nothing on stdout, and its stderr has exactly one line starting with
# "error: " (EXPECT_MESSAGES of them when set: an input with several distinct
# problems), one of which matches REGEX, and none matches EXPECT_ABSENT when it is
# set (a regex). Runs in a fresh temporary directory, so
# that commands writing files leave nothing behind.
code=$1; regex=$2; shift 2
err=$(mktemp); out=$(mktemp)
"$@" >"$out" 2>"$err"; rc=$?
status=0
if [ "$rc" -ne "$code" ]; then echo "exit code $rc, expected $code"; status=1; fi
if ! grep -E "^error: .*$regex" "$err" >/dev/null; then echo "stderr does not match '$regex'"; status=1; fi
messages=$(grep -c "^error: " "$err")
expected=${EXPECT_MESSAGES:-1}
if [ "$messages" -ne "$expected" ]; then echo "$messages error messages, expected $expected"; status=1; fi
if [ -n "${EXPECT_ABSENT:-}" ] && grep -E "$EXPECT_ABSENT" "$err" >/dev/null; then echo "stderr matches '$EXPECT_ABSENT'"; status=1; fi
if [ -s "$out" ]; then echo "stdout was not empty"; status=1; fi
echo "--- stderr:"; cat "$err"
rm -f "$err" "$out"
exit $status
