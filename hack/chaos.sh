#!/usr/bin/env bash
# Runs the chaos scenarios of test/chaos on a playground cluster of their
# own: CHAOS_COUNT rounds of each (default 3) at full size (100 concurrent
# rollouts in scenario b, 20-step random walks in scenario a), each round
# with the seed it prints. It ends with the counts: scenarios run, faults
# injected, rollouts completed, violations found; it fails on any violation
# or failed round. Arguments go to the test binary, e.g.
#   hack/chaos.sh -seed=1234 -count=1 -test.run TestRandomWalk
# -deployer-mode=pod|controller-when-possible picks dc-controller's
# --deployer-mode (default: dc-controller's own, pod); make chaos runs this
# script once in each.
# CHAOS_VERBOSE=1 also prints every fault as it is injected; DC_KEEP_CLUSTER=1
# keeps the cluster of a failed run for a look. Needs `make tools build`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export DC_BIN=${DC_BIN:-$root/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/chaos.test" ./test/chaos
flags=(-test.timeout "${CHAOS_TIMEOUT:-120m}" -count="${CHAOS_COUNT:-3}")
if [[ -n ${CHAOS_VERBOSE:-} ]]; then
  flags+=(-test.v)
fi
cd test/chaos
"$work/chaos.test" "${flags[@]}" "$@"
