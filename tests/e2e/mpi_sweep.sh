#!/bin/sh
# mpi_sweep.sh FABSIM SWEEP: the sweep under `mpirun -np 2` (points split over
# the ranks, gathered on rank 0) prints exactly what it prints in one process.
set -e
fabsim=$1; sweep=$2
# CI runs as root; Open MPI refuses root unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under the sanitizer build, Open MPI's own allocations at exit are not ours to report.
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
one=$(mktemp); two=$(mktemp)
trap 'rm -f "$one" "$two"' EXIT
"$fabsim" sweep "$sweep" > "$one"
mpirun -np 2 --oversubscribe "$fabsim" sweep "$sweep" > "$two"
if ! cmp -s "$one" "$two"; then
  echo "mpirun -np 2 output differs from the single-process sweep:"; diff "$one" "$two" | head -20; exit 1
fi
lines=$(wc -l < "$two")
[ "$lines" -gt 1 ] || { echo "no sweep rows"; exit 1; }
echo "ok: $lines lines, identical under mpirun -np 2"
