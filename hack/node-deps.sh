#!/usr/bin/env bash
# Installs the Debian packages the real node runs on (containerd, runc, the
# CNI plugins, iptables, iproute2, nsenter) when one is missing. It needs
# root; without it, it says what is missing and how to get it.
set -euo pipefail

# package:file-or-command it provides
wanted=(
  containerd:containerd
  containerd:ctr
  runc:runc
  containernetworking-plugins:/usr/lib/cni/bridge
  iptables:iptables
  iproute2:ip
  util-linux:nsenter
)

missing=()
for entry in "${wanted[@]}"; do
  pkg=${entry%%:*} provides=${entry#*:}
  if [[ $provides == /* ]]; then [[ -e $provides ]] && continue
  else command -v "$provides" >/dev/null 2>&1 && continue
  fi
  [[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "the real node needs the Debian packages: ${missing[*]} (missing), and root to run." >&2
  echo "install them as root: apt-get update && apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "installing Debian packages for the real node: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
