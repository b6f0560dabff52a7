#!/bin/sh
# install_test.sh BUILD: `cmake --install` to a temporary prefix, the prefix moved
# elsewhere (relocatable: nothing absolute is compiled in), then the installed
# fabsim run from another directory, as a user outside the checkout runs it.
set -e
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
prefix=$work/moved
mkdir "$work/elsewhere"
cd "$work/elsewhere"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
unset FABSIM_DATA_DIR
fail() { echo "FAIL: $*"; exit 1; }

for f in bin/fabsim share/fabsim/configs/hardware/catalogue.json share/fabsim/topologies/hgx-h100.json \
         share/fabsim/configs/scenarios/hgx-h100-allreduce.json share/fabsim/configs/traces/dp8-ddp-step.json \
         share/fabsim/schemas/topology.schema.json share/doc/fabsim/README.md share/doc/fabsim/LICENSE; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
[ -z "$(find "$prefix/share/fabsim/topologies" -name '*.cpp' -o -name '*.hpp' -o -name '*.txt')" ] || fail "sources installed as data"

"$prefix/bin/fabsim" --version | grep -Eq '^fabsim [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(\+dirty)?|unknown)\)$' || fail "--version: $("$prefix/bin/fabsim" --version)"
"$prefix/bin/fabsim" list topologies | grep -q '^hgx-h100 ' || fail "list topologies"
[ "$("$prefix/bin/fabsim" list topologies | wc -l)" -eq "$(ls "$prefix/share/fabsim/topologies" | wc -l)" ] || fail "list topologies: not one line per stock file"
"$prefix/bin/fabsim" list models | grep -q '^gpu h100-sxm ' || fail "list models"
"$prefix/bin/fabsim" list scenarios | grep -q '^hgx-h100-allreduce ' || fail "list scenarios"
"$prefix/bin/fabsim" list traces | grep -q '^dp8-ddp-step ' || fail "list traces"

# A stock fabric by name; the installed catalogue and its hash in the provenance.
out=$("$prefix/bin/fabsim" nccl-test -t hgx-h100 -b 1M -e 1M --format json 2>/dev/null)
echo "$out" | grep -q "\"file\": \"$prefix/share/fabsim/configs/hardware/catalogue.json\"" || fail "provenance does not name the installed catalogue: $out"
sha=$(sha256sum "$prefix/share/fabsim/configs/hardware/catalogue.json" | cut -d' ' -f1)
echo "$out" | grep -q "\"sha256\": \"$sha\"" || fail "catalogue sha256 is not the file's ($sha)"
# A scenario by name (its relative topology reference resolves inside the installation), a trace by name.
"$prefix/bin/fabsim" run hgx-h100-allreduce --format csv 2>/dev/null | grep -q '^8589934592,' || fail "run hgx-h100-allreduce"
"$prefix/bin/fabsim" replay -t hgx-h100 dp8-ddp-step --format json 2>/dev/null | grep -q '"makespan_us"' || fail "replay by stock names"
"$prefix/bin/fabsim" check "$prefix/share/fabsim/topologies/hgx-h100.json" >/dev/null || fail "check"

# A file wins over a stock name of the same name.
cp "$prefix/share/fabsim/topologies/nvlink-mesh-4gpu.json" hgx-h100
"$prefix/bin/fabsim" nccl-test -t hgx-h100 -b 1M -e 1M --format json 2>/dev/null | grep -q '"gpus": 4' || fail "a file named hgx-h100 does not win"
rm hgx-h100

# Unknown names list the valid ones; a wrong FABSIM_DATA_DIR is one clear error.
err=$("$prefix/bin/fabsim" nccl-test -t hgx-h999 2>&1 >/dev/null) && fail "unknown name accepted"
echo "$err" | grep -q "'hgx-h999' is neither a file nor a stock topology (stock topologies: aws-p5-32node, dgx-a100, " || fail "unknown name: $err"
err=$(FABSIM_DATA_DIR=/nonexistent "$prefix/bin/fabsim" nccl-test -t hgx-h100 2>&1 >/dev/null) && fail "bad FABSIM_DATA_DIR accepted"
echo "$err" | grep -q "FABSIM_DATA_DIR: '/nonexistent' does not hold fabsim's data" || fail "bad FABSIM_DATA_DIR: $err"
# The variable overrides the installed data.
mkdir -p alt && cp -r "$prefix/share/fabsim/." alt/
FABSIM_DATA_DIR=$PWD/alt "$prefix/bin/fabsim" nccl-test -t hgx-h100 -b 1M -e 1M --format json 2>/dev/null | grep -q "\"file\": \"$PWD/alt/configs/hardware/catalogue.json\"" \
  || fail "FABSIM_DATA_DIR does not override"
echo "ok: installed to a prefix, moved, and run from another directory"
