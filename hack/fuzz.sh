#!/usr/bin/env bash
# Runs every Fuzz target of the module for a short while (FUZZTIME, default
# 5s each): enough to catch a panic on odd input in `make test`; run one
# longer by hand with `go test -fuzz=NAME -fuzztime=5m ./PKG`.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
# Targets are found by name in the test files, so listing them compiles
# nothing.
grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' --exclude-dir=bin . | sort |
while read -r file; do
  dir=./$(dirname "${file#./}")
  for target in $(grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    echo "fuzz $dir $target ($fuzztime)"
    if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$dir" 2>&1); then
      echo "$out" >&2
      exit 1
    fi
  done
done
