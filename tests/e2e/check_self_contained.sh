#!/bin/sh
# check_self_contained.sh ROOT: no tracked file refers to the folder beside the
# repository that only the developers have; the suite must pass from a clone.
cd "$1" || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then echo "not a git checkout: nothing to check"; exit 0; fi
found=$(git grep -l -e '[.][.]/shar[e]d' -- . ':!tests/e2e/check_self_contained.sh')
if [ -n "$found" ]; then echo "files refer to the shared folder beside the repository:"; echo "$found"; exit 1; fi
echo "no tracked file refers to the shared folder beside the repository"
