#!/usr/bin/env bash
# Runs every Fuzz target of the module for a short while (FUZZTIME, default
# 5s each): enough to catch a panic on odd input in `make test`; run one
# longer by hand with `go test -fuzz=NAME -fuzztime=5m ./PKG`.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
for pkg in $(go list ./... | grep -Ev "/test/(integration|e2e)"); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >/dev/null
  done
done
