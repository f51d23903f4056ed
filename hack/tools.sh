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
# Helm 4 from its Go module (its go.mod has no replace directives, so
# go install builds it as released).
HELM_VERSION=v4.3.1
# The Gateway API's standard CRDs, for traffic routing (HTTPRoute, GRPCRoute).
GATEWAY_API_VERSION=v1.6.3
# Traefik, the real node's Gateway API data plane (its kubernetesgateway
# provider), built from its Go module.
TRAEFIK_VERSION=v3.7.13

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

# gateway_api_crds: copy the standard CRDs of the Gateway API module into
# bin/gateway-api-crds/ (the YAML ships in the module; nothing is built).
gateway_api_crds() {
  local dir="$cache/gateway-api-crds-$GATEWAY_API_VERSION"
  if [[ ! -f "$dir/.done" ]]; then
    echo "fetching the Gateway API $GATEWAY_API_VERSION CRDs (first time only)..." >&2
    local src
    src=$(cd "$root" && go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | awk -F'"' '$2 == "Dir" {print $4}')
    [[ -d "$src/config/crd/standard" ]] || { echo "hack/tools.sh: sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION has no config/crd/standard" >&2; return 1; }
    mkdir -p "$dir"
    cp "$src"/config/crd/standard/gateway.networking.k8s.io_*.yaml "$dir/"
    # Not a CRD: an admission policy for upgrades of the CRDs.
    rm -f "$dir"/gateway.networking.k8s.io_vap_*.yaml
    chmod -R u+w "$dir"
    touch "$dir/.done"
  fi
  ln -sfn "$dir" "$bin/gateway-api-crds"
}

# traefik: build Traefik from a copy of its module's source (go install
# cannot: its go.mod has replace directives). Two modules it names are not
# served, so hack/traefik/ stands in for them in the copy (its README says
# what each is), and the copy leaves out lego's DNS challenge providers,
# several of whose dependencies are not served either. The web UI's assets
# come from npm in Traefik's own build; the real node serves no dashboard, so
# webui/static keeps only what the module zip has.
traefik() {
  link traefik "$TRAEFIK_VERSION" && return 0
  echo "building traefik $TRAEFIK_VERSION (first time only)..." >&2
  local src
  src=$(cd "$root" && go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" | awk -F'"' '$2 == "Dir" {print $4}')
  [[ -f "$src/go.mod" ]] || { echo "hack/tools.sh: cannot download github.com/traefik/traefik/v3@$TRAEFIK_VERSION" >&2; return 1; }
  local work="$cache/traefik-$TRAEFIK_VERSION.src"
  rm -rf "$work"
  cp -r "$src" "$work"
  chmod -R u+w "$work"
  mkdir -p "$work/pkg/config/dynamic/ext" "$work/third_party"
  cp "$root"/hack/traefik/ext/* "$work/pkg/config/dynamic/ext/"
  cp -r "$root/hack/traefik/go-http-auth" "$work/third_party/go-http-auth"
  (cd "$work" && go mod edit -replace github.com/abbot/go-http-auth=./third_party/go-http-auth)
  local acme="$work/pkg/provider/acme/provider.go"
  grep -q 'dns.NewDNSChallengeProviderByName(p.DNSChallenge.Provider)' "$acme" || { echo "hack/tools.sh: $acme no longer calls lego's DNS providers as expected" >&2; return 1; }
  sed -i -e '\#"github.com/go-acme/lego/v5/providers/dns"#d' \
    -e 's#dns.NewDNSChallengeProviderByName(p.DNSChallenge.Provider)#nil, fmt.Errorf("DNS challenge provider %q: not in this build of Traefik", p.DNSChallenge.Provider)#' "$acme"
  # go:embed needs at least one file in webui/static.
  [[ -n "$(ls -A "$work/webui/static" 2>/dev/null)" ]] || { mkdir -p "$work/webui/static" && echo "no web UI in this build" >"$work/webui/static/README.md"; }
  mkdir -p "$cache/traefik-$TRAEFIK_VERSION"
  (cd "$work" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
    -o "$cache/traefik-$TRAEFIK_VERSION/traefik.tmp" ./cmd/traefik)
  mv "$cache/traefik-$TRAEFIK_VERSION/traefik.tmp" "$cache/traefik-$TRAEFIK_VERSION/traefik"
  rm -rf "$work"
  link traefik "$TRAEFIK_VERSION"
}

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=(controller-gen etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kwok kwokctl prometheus helm gateway-api-crds)

for tool in "${want[@]}"; do
  case "$tool" in
    controller-gen) install_module controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$CONTROLLER_TOOLS_VERSION" ;;
    kwok) install_module kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION" ;;
    kwokctl) install_module kwokctl sigs.k8s.io/kwok/cmd/kwokctl "$KWOK_VERSION" ;;
    # remove_all_sd leaves out the cloud service discoveries (the tests
    # scrape static targets): a build of minutes instead of most of an hour.
    prometheus) install_module prometheus github.com/prometheus/prometheus/cmd/prometheus "$PROMETHEUS_VERSION" -tags remove_all_sd ;;
    # The release builds set the version helm prints; go install does not.
    helm) install_module helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION" -ldflags "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" ;;
    gateway-api-crds) gateway_api_crds ;;
    traefik) traefik ;;
    etcd) build_kube etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl | kubelet)
      build_kube "$tool" "k8s.io/kubernetes/cmd/$tool" "$KUBE_VERSION" ;;
    *) echo "hack/tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
done
