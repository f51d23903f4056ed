#!/usr/bin/env bash
# timed.sh FILE NAME COMMAND...: runs COMMAND and, when it succeeds, appends
# NAME and the seconds it took to FILE, for make test's closing summary.
set -euo pipefail
file=$1 name=$2
shift 2
mkdir -p "$(dirname "$file")"
start=$(date +%s)
"$@"
printf '%s\t%d\n' "$name" "$(( $(date +%s) - start ))" >> "$file"
