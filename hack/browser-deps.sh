#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the dashboard's browser
# test (test/e2e/dashboard_test.go) drives through chromedp, when it is
# missing. It needs root; without it, it says what is missing and how to get
# it, and the test fails with the same words.
set -euo pipefail

for cmd in chromium chromium-browser; do
  command -v "$cmd" >/dev/null 2>&1 && exit 0
done

if [[ $(id -u) -ne 0 ]]; then
  echo "the dashboard's browser test needs the Debian package: chromium (missing)." >&2
  echo "install it as root: apt-get update && apt-get install --no-install-recommends chromium" >&2
  exit 1
fi
echo "installing the Debian package for the dashboard's browser test: chromium" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
