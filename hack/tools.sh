#!/usr/bin/env bash
# Builds the pinned control-plane and code-generation tools into bin/.
#
# Every binary comes from a Go module (nothing is downloaded from release
# pages). Finished binaries are kept in a cache outside the checkout, keyed by
# tool and version, so a fresh clone links them into bin/ in seconds instead
# of rebuilding Kubernetes for ten minutes.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
cache="${DEPLOYCONFIG_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deployconfig/tools}"

KUBE_VERSION=v1.37.2
KUBE_MINOR=37
ETCD_VERSION=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$root/hack/tools/go.mod")
KWOK_VERSION=v0.8.0
CONTROLLER_TOOLS_VERSION=v0.23.0
# Prometheus for the analysis tests and the playground (the Go module
# version of Prometheus 3.x).
PROMETHEUS_VERSION=v0.316.0

mkdir -p "$bin" "$cache"

# link NAME VERSION: point bin/NAME at the cached build; return 1 when the
# cache does not have it yet.
link() {
  local target="$cache/$1-$2/$1"
  [[ -x "$target" ]] || return 1
  ln -sfn "$target" "$bin/$1"
}

kube_ldflags() {
  local v
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s ' "$v" "$KUBE_VERSION" "$v" "$v" "$KUBE_MINOR"
  done
}

# build_kube NAME PACKAGE VERSION: build a command of the hack/tools module.
build_kube() {
  local name=$1 pkg=$2 version=$3
  link "$name" "$version" && return 0
  echo "building $name $version (first time only)..." >&2
  mkdir -p "$cache/$name-$version"
  (cd "$root/hack/tools" && go build -trimpath -ldflags "$(kube_ldflags)" -o "$cache/$name-$version/$name.tmp" "$pkg")
  mv "$cache/$name-$version/$name.tmp" "$cache/$name-$version/$name"
  link "$name" "$version"
}

# install_module NAME PACKAGE VERSION [GO FLAGS...]: go install a command at
# a pinned version.
install_module() {
  local name=$1 pkg=$2 version=$3
  shift 3
  link "$name" "$version" && return 0
  echo "building $name $version (first time only)..." >&2
  mkdir -p "$cache/$name-$version"
  GOBIN="$cache/$name-$version" go install "$@" "$pkg@$version"
  link "$name" "$version"
}

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=(controller-gen etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kwok kwokctl prometheus)

for tool in "${want[@]}"; do
  case "$tool" in
    controller-gen) install_module controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$CONTROLLER_TOOLS_VERSION" ;;
    kwok) install_module kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION" ;;
    kwokctl) install_module kwokctl sigs.k8s.io/kwok/cmd/kwokctl "$KWOK_VERSION" ;;
    # remove_all_sd leaves out the cloud service discoveries (the tests
    # scrape static targets): a build of minutes instead of most of an hour.
    prometheus) install_module prometheus github.com/prometheus/prometheus/cmd/prometheus "$PROMETHEUS_VERSION" -tags remove_all_sd ;;
    etcd) build_kube etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl | kubelet)
      build_kube "$tool" "k8s.io/kubernetes/cmd/$tool" "$KUBE_VERSION" ;;
    *) echo "hack/tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
done
