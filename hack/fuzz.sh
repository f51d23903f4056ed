#!/usr/bin/env bash
# Runs every Fuzz target of the module for a short while (FUZZTIME, default
# 20000 inputs each, a few seconds): enough to catch a panic on odd input in
# `make test`; run one longer by hand with `go test -fuzz=NAME -fuzztime=5m ./PKG`.
# The default is a count, not a duration: with a duration, Go 1.26's fuzzing
# coordinator can report "context deadline exceeded" as a failure when the
# time runs out while a worker is busy (golang/go#75804, fixed in Go 1.27),
# which a loaded machine makes likely. A real finding prints its input.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-20000x}
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
