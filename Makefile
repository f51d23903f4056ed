# deployconfig: see README.md. Every target builds what it needs first.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

GO_PACKAGES := ./...

# The version and commit stamped into the binaries (kubectl dc version,
# dc-controller --version, dc-deploy --version): the nearest tag, or VERSION
# given on the command line.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
VERSION_PKG := github.com/deployconfig/deployconfig/internal/version
LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)

# Unit tests: everything except the suites that need a cluster.
UNIT_PACKAGES = $(shell go list ./... | grep -Ev "/test/(integration|e2e|chaos|security|node)(/|$$)")
# The benchmark is a module of its own (bench/go.mod), so its plotting
# dependencies stay out of the product's go.mod.
BENCH_MODULE := $(CURDIR)/bench

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: tools-codegen ## Regenerate deepcopy, CRD and RBAC from the code's markers.
	$(BIN)/controller-gen object paths=./api/...
	$(BIN)/controller-gen crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(BIN)/controller-gen rbac:roleName=dc-controller paths=./internal/controller/... output:rbac:artifacts:config=config/rbac
	go run ./hack/crdlimits config/crd/bases/apps.deployconfig.io_deploymentconfigs.yaml
	cp config/crd/bases/apps.deployconfig.io_deploymentconfigs.yaml config/crd/bases/apps.deployconfig.io_rolloutpolicies.yaml charts/deployconfig/crds/
	go run ./hack/chartrbac config/rbac/role.yaml charts/deployconfig/templates/rbac.yaml

.PHONY: tools
tools: ## Build the pinned control plane, kwok, controller-gen and helm into bin/ (cached).
	hack/tools.sh

.PHONY: tools-codegen
tools-codegen:
	hack/tools.sh controller-gen

.PHONY: tools-integration
tools-integration:
	hack/tools.sh etcd kube-apiserver kubectl gateway-api-crds

.PHONY: build
build: ## Build dc-controller, dc-deploy, kubectl-dc, dc-local and the other commands into bin/.
	go build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

.PHONY: build-bench
build-bench: ## Build dc-bench (the bench/ module) into bin/.
	cd $(BENCH_MODULE) && go build -o $(BIN)/ ./cmd/dc-bench

.PHONY: images
images: ## Build the container images from source (no Docker) as an OCI layout in bin/images.
	go run ./hack/images --out $(BIN)/images --version $(VERSION) --revision $(COMMIT)

# A release: make release VERSION=v0.x.y REGISTRY=host/path [DRY_RUN=1].
.PHONY: release
release: ## Build kubectl-dc for linux and darwin (amd64, arm64) with SHA256SUMS and a krew manifest, the images with SBOMs and the chart into bin/release/VERSION, and push images and chart to REGISTRY (DRY_RUN=1: push nothing).
	hack/tools.sh helm
	go run ./hack/release --version '$(VERSION)' --registry '$(REGISTRY)' --out $(BIN)/release --helm $(BIN)/helm $(if $(DRY_RUN),--dry-run)

.PHONY: lint
lint: tools-codegen ## go vet, gofmt, and make verify (generated code and docs/reference current).
	go vet ./...
	cd $(BENCH_MODULE) && go vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(MAKE) --no-print-directory verify

.PHONY: docs
docs: ## Regenerate docs/reference: the kubectl dc commands, dc-controller's flags and the API's fields.
	go run ./hack/docgen docs/reference

.PHONY: verify
verify: tools-codegen ## Fail when generated code or docs/reference is not what make generate and make docs write.
	hack/verify-generated.sh
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; go run ./hack/docgen "$$tmp"; \
	if ! diff -r docs/reference "$$tmp" >/dev/null; then \
	  echo "docs/reference is out of date; run 'make docs' and commit:" >&2; diff -r docs/reference "$$tmp" | head -40 >&2; exit 1; fi

##@ Tests

.PHONY: test
# Each suite's time goes to TEST_TIMES; make test ends with them, the rest of
# its time being the tools and builds its suites need.
TEST_TIMES := $(BIN)/test-times.tsv
TIMED = $(CURDIR)/hack/timed.sh $(TEST_TIMES)

test: test-times-start test-unit test-fuzz test-integration test-e2e test-chaos test-security test-node ## Unit, fuzz, integration, end-to-end (kwok and real node), short chaos and security tests; ends with each suite's time.
	@start=$$(head -1 $(TEST_TIMES) | cut -f2); total=$$(( $$(date +%s) - start )); \
	echo "make test: time per suite"; \
	tail -n +2 $(TEST_TIMES) | awk -F'\t' -v total=$$total '{ printf "  %-28s %3dm%02ds\n", $$1, $$2/60, $$2%60; sum += $$2 } \
	  END { rest = total - sum; printf "  %-28s %3dm%02ds\n  %-28s %3dm%02ds\n", "tools and builds", rest/60, rest%60, "total", total/60, total%60 }'

.PHONY: test-times-start
test-times-start:
	@mkdir -p $(BIN) && printf 'start\t%d\n' "$$(date +%s)" > $(TEST_TIMES)

.PHONY: test-unit
test-unit:
	$(TIMED) unit go test -race -count=1 -timeout 20m $(UNIT_PACKAGES)
	cd $(BENCH_MODULE) && $(TIMED) 'unit (bench module)' go test -race -count=1 ./...

# The tests convert, create and roll out the project's own corpus of
# DeploymentConfig manifests (test/testdata/dc-corpus). test-compat runs the
# same tests on another corpus, such as real manifests gathered from
# OpenShift users: make test-compat DC_COMPAT_DIR=../shared/compat.
.PHONY: test-compat
test-compat: tools build ## The corpus tests (convert, API server, playground) on the manifests under DC_COMPAT_DIR.
	@if [ -z '$(DC_COMPAT_DIR)' ] || [ ! -d '$(DC_COMPAT_DIR)' ]; then echo "test-compat: DC_COMPAT_DIR must name a directory of DeploymentConfig manifests (got '$(DC_COMPAT_DIR)')" >&2; exit 2; fi
	DC_COMPAT_DIR=$(abspath $(DC_COMPAT_DIR)) go test -count=1 -run '^TestConvertCorpus$$' ./internal/cli/convert/
	DC_COMPAT_DIR=$(abspath $(DC_COMPAT_DIR)) KUBEBUILDER_ASSETS=$(BIN) go test -count=1 -timeout 15m -run '^TestCompatCorpusIsAccepted$$' ./test/integration/
	DC_COMPAT_DIR=$(abspath $(DC_COMPAT_DIR)) DC_BIN=$(BIN) go test -count=1 -timeout 20m -run '^TestConvertCorpus$$' ./test/e2e/

.PHONY: test-fuzz
test-fuzz: ## Run every fuzz target briefly (FUZZTIME each, default 20000x: 20000 inputs).
	$(TIMED) fuzz hack/fuzz.sh

.PHONY: test-integration
test-integration: tools-integration
	KUBEBUILDER_ASSETS=$(BIN) $(TIMED) integration go test -count=1 -timeout 15m ./test/integration/...

.PHONY: test-e2e
test-e2e: tools build ## End-to-end tests on kwok, with the dashboard's browser test (Debian's chromium: hack/browser-deps.sh).
	hack/browser-deps.sh
	DC_BIN=$(BIN) $(TIMED) e2e go test -count=1 -timeout 20m ./test/e2e/...

.PHONY: test-chaos
test-chaos: tools build ## A short round of every chaos scenario in each deployer mode (make chaos runs the long one).
	DC_BIN=$(BIN) $(TIMED) 'chaos (pod)' go test -count=1 -short -timeout 15m ./test/chaos/ -args -deployer-mode=pod
	DC_BIN=$(BIN) $(TIMED) 'chaos (controller)' go test -count=1 -short -timeout 15m ./test/chaos/ -args -deployer-mode=controller-when-possible

.PHONY: test-security
test-security: tools build ## Pod Security, RBAC and forbidden-user tests on a playground cluster.
	DC_BIN=$(BIN) $(TIMED) security go test -count=1 -timeout 10m ./test/security/

.PHONY: tools-node
tools-node: ## The real node's tools: the control plane, kubelet, Prometheus, and Traefik with the Gateway API CRDs (cached), and Debian's containerd, runc and CNI plugins.
	hack/tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet helm prometheus gateway-api-crds traefik
	hack/node-deps.sh

.PHONY: test-node
test-node: tools-node build ## End-to-end tests on a real node (kubelet, containerd, real containers; needs root).
	DC_BIN=$(BIN) $(TIMED) 'real node' go test -count=1 -timeout 45m ./test/node/

.PHONY: chaos
# Both deployer modes run even when the first fails, each ending with its
# counts; the target fails when either did.
chaos: tools build ## Every chaos scenario at full size, CHAOS_COUNT rounds each, in each deployer mode; ends with each mode's counts.
	hack/chaos.sh -deployer-mode=pod; pod=$$?; hack/chaos.sh -deployer-mode=controller-when-possible && exit $$pod

##@ Benchmark

# BENCH_FLAGS passes dc-bench flags, e.g. BENCH_FLAGS="--quick" or
# BENCH_FLAGS="--sizes 1000 --scenarios latency,throughput" (dc-bench -h).
BENCH_FLAGS ?=

# The default scenarios end with the real-node one (needs root and the
# kubelet: tools-node); BENCH_FLAGS="--scenarios reference,latency,throughput,footprint"
# leaves it out.
.PHONY: bench
bench: tools tools-node build build-bench ## Benchmark DCs against Deployments on a playground cluster, then on a real node (not part of test; see bench/README.md).
	$(BIN)/dc-bench --root $(CURDIR) --bin $(BIN) --out $(CURDIR)/bench/results $(BENCH_FLAGS)

.PHONY: bench-node
bench-node: tools-node build build-bench ## Only the real-node benchmark: 20 rollouts each of a DC and a Deployment on real containers (root).
	$(BIN)/dc-bench --root $(CURDIR) --bin $(BIN) --out $(CURDIR)/bench/results --scenarios node $(BENCH_FLAGS)

##@ Playground

# NODE=real runs the playground on a real node (kubelet, containerd, real
# containers; needs root) instead of kwok's simulated nodes.
NODE ?= kwok
# NAME names the playground cluster (dc-local's default when empty), so that
# a second one can run beside it.
NAME ?=
PLAYGROUND_FLAGS = --node=$(NODE) $(if $(NAME),--name=$(NAME))

.PHONY: run
run: tools build $(if $(filter real,$(NODE)),tools-node) ## Start (or reuse) the local playground and roll out a sample (NODE=real: on a real node; NAME=: another cluster).
	$(BIN)/dc-local up --follow $(PLAYGROUND_FLAGS)

.PHONY: down
down: ## Remove the local playground (NODE=real: the real node; NAME=: another cluster).
	@if [ -x $(BIN)/dc-local ]; then $(BIN)/dc-local down $(PLAYGROUND_FLAGS); else go run ./cmd/dc-local down $(PLAYGROUND_FLAGS); fi

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
