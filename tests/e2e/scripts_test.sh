#!/bin/sh
# scripts_test.sh SOURCE_DIR: scripts/min-fabric answers from a sweep CSV, and
# scripts/plot draws every chart kind (when Debian's matplotlib is there).
set -e
src=$1
csv="$src/tests/data/nic-sweep-1024.csv"
out=$(python3 "$src/scripts/min-fabric" "$csv" --busbw 300 \
      --order /topology_patch/generate/network/link_model,/topology_patch/generate/network/oversubscription)
echo "$out"
echo "$out" | grep -q "smallest: /topology_patch/generate/network/link_model=ib-ndr-400, /topology_patch/generate/network/oversubscription=\[1\]" \
  || { echo "min-fabric: wrong answer for 300 GB/s"; exit 1; }
if python3 "$src/scripts/min-fabric" "$csv" --busbw 500 --order /topology_patch/generate/network/link_model >/dev/null; then
  echo "min-fabric: 500 GB/s is out of reach but it did not say so"; exit 1
fi
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
  "$src/scripts/plot" "$csv" -o "$dir/size.png"
  "$src/scripts/plot" "$csv" -o "$dir/rate.svg" --against /topology_patch/generate/network/link_model --size 4G
  for f in size.png rate.svg; do [ -s "$dir/$f" ] || { echo "plot: $f is empty"; exit 1; }; done
  head -c 8 "$dir/size.png" | grep -q PNG || { echo "plot: size.png is not a PNG"; exit 1; }
else
  echo "matplotlib missing: plot not checked"
fi
echo ok
