#!/usr/bin/env bash
# Fails when `make generate` would change committed files.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s generate >/dev/null
if ! git diff --quiet -- api config charts/deployconfig/crds charts/deployconfig/templates/rbac.yaml; then
  echo "generated code is out of date; run 'make generate' and commit:" >&2
  git --no-pager diff --stat -- api config charts/deployconfig/crds charts/deployconfig/templates/rbac.yaml >&2
  exit 1
fi
