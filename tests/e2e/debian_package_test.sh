#!/bin/sh
# debian_package_test.sh BUILD: `cpack -G DEB` builds a package whose Depends are the
# Debian runtime packages fabsim links, holding the binary and its data; unpacked
# (not installed: the test leaves the system alone) it runs.
set -e
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
(cd "$build" && cpack -G DEB -B "$work" >/dev/null)
deb=$(ls "$work"/fabsim_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for p in libsystemc libfmt zlib1g libstdc++6 libc6; do
  echo "$depends" | grep -q "$p" || fail "Depends lacks $p"
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/fabsim ./usr/share/fabsim/configs/hardware/catalogue.json ./usr/share/fabsim/topologies/gb200-nvl72.json \
         ./usr/share/fabsim/schemas/trace.schema.json ./usr/share/doc/fabsim/LICENSE; do
  echo "$contents" | grep -q " $f\$" || fail "the package lacks $f"
done
dpkg-deb -x "$deb" "$work/root"
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/root/usr/bin/fabsim" nccl-test -t hgx-h100 -b 1M -e 1M 2>/dev/null | grep -q '^ *1048576 ' \
  || fail "the unpacked fabsim does not run"
echo "ok: $(basename "$deb")"
