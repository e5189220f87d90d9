# Caldera. `make run` starts a local environment; `make test` runs every test.
# Both build what they need first; the only prerequisite is Go.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

export GOTOOLCHAIN := local
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen

GO_TEST_FLAGS ?=

.PHONY: all
all: build

# Binaries record the git revision they are built from (calderactl version
# prints it), also where GOFLAGS sets -buildvcs=false; where git cannot read
# the checkout, which would fail the build, they record none.
BUILDVCS := $(shell git -C $(CURDIR) status --porcelain >/dev/null 2>&1 && echo auto || echo false)

## build: build every binary into bin/.
.PHONY: build
build:
	go build -buildvcs=$(BUILDVCS) -o $(BIN)/ ./cmd/...

## operators: build (or reuse from the cache) the operators whose Volcano
## integrations the e2e tests drive (KubeRay, the Kubeflow Training
## Operator), from the Go module proxy.
.PHONY: operators
operators:
	hack/build-operators.sh

## helm: build (or reuse from the cache) the Helm command line the tests
## install the charts with.
.PHONY: helm
helm:
	hack/build-helm.sh

## chromium: install Debian's Chromium if no Chromium is found (the
## dashboard's browser test drives it).
.PHONY: chromium
chromium:
	hack/install-chromium.sh

## control-plane: build (or reuse from the cache) etcd, kube-apiserver, kwok, ...
.PHONY: control-plane
control-plane:
	hack/build-control-plane.sh

$(CONTROLLER_GEN): hack/tools/go.mod hack/tools/go.sum
	@mkdir -p $(BIN)
	cd hack/tools && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

## generate: regenerate deepcopy functions and CRD manifests from the API types, and deploy/member from the chart.
.PHONY: generate
generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/... paths=./pkg/scheduler/config/... paths=./pkg/federation/karmada/... paths=./pkg/federation/clusterapi/...
	rm -f deploy/crds/*_*.yaml
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/... output:crd:artifacts:config=deploy/crds
	hack/crd-kustomization.sh > deploy/crds/kustomization.yaml.tmp && mv deploy/crds/kustomization.yaml.tmp deploy/crds/kustomization.yaml
	go test ./deploy/helm -run '^TestManifestsAreTheCharts$$' -update
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./pkg/federation/karmada/... output:crd:artifacts:config=test/crds/karmada
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./pkg/federation/clusterapi/... output:crd:artifacts:config=test/crds/clusterapi

## verify: fail when generated files are stale, or on gofmt or go vet findings.
.PHONY: verify
verify: $(CONTROLLER_GEN) lint
	CONTROLLER_GEN=$(CONTROLLER_GEN) hack/verify-generated.sh

## lint: gofmt and go vet (with every build tag the tests use).
.PHONY: lint
lint:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	go vet -tags integration,e2e,perf,chaos,rbacusage,images,prometheus ./...

## test: verify, then unit, fuzz (briefly), integration, end-to-end and fault-injection tests,
## and the check that the components use every permission they are granted.
.PHONY: test
test: verify test-unit test-fuzz test-integration test-e2e test-chaos test-rbac

.PHONY: test-unit
test-unit:
	go test $(GO_TEST_FLAGS) ./...

# Every validation entry point is fuzzed for FUZZ_TIME (a number of inputs,
# which load cannot cut short) in make test; longer runs: make fuzz-long.
FUZZ_TIME ?= 3000x
FUZZ_TARGETS := \
	FuzzValidateJob:./apis/batch/v1alpha1/validation \
	FuzzValidateJobUpdate:./apis/batch/v1alpha1/validation \
	FuzzValidateQueue:./apis/scheduling/v1beta1/validation \
	FuzzValidateQueueUpdate:./apis/scheduling/v1beta1/validation \
	FuzzValidatePodGroup:./apis/scheduling/v1beta1/validation \
	FuzzValidateHyperNode:./apis/topology/v1alpha1/validation \
	FuzzValidateHyperJob:./apis/training/v1alpha1/validation \
	FuzzValidateDataSource:./apis/datadependency/v1alpha1/validation \
	FuzzValidateDataSourceClaim:./apis/datadependency/v1alpha1/validation \
	FuzzValidatePodTemplate:./pkg/webhooks/podtemplate \
	FuzzValidateBudgetAnnotations:./pkg/webhooks/pod \
	FuzzValidatePreemptionKeys:./pkg/webhooks/pod \
	FuzzValidateGPURequests:./pkg/webhooks/pod \
	FuzzQueueWebhook:./pkg/webhooks/queue \
	FuzzJobWebhook:./pkg/webhooks/job

.PHONY: test-fuzz
test-fuzz:
	@for t in $(FUZZ_TARGETS); do \
		name=$${t%%:*}; pkg=$${t#*:}; \
		echo "fuzz $$name ($$pkg, $(FUZZ_TIME))"; \
		go test -run '^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZ_TIME) $$pkg || exit 1; \
	done

## fuzz-long: fuzz every target of FUZZ_TARGETS for FUZZ_LONG_TIME (default 10m)
## each, printing each target's executions and whether it found a crash (logs
## in _output/fuzz/); fails if one did.
FUZZ_LONG_TIME ?= 10m
.PHONY: fuzz-long
fuzz-long:
	hack/fuzz-long.sh $(FUZZ_LONG_TIME) $(CURDIR)/_output/fuzz $(FUZZ_TARGETS)

# Integration and end-to-end tests always run (-count=1): go test's cache
# does not see the control-plane binaries they start.
.PHONY: test-integration
test-integration: control-plane build chromium helm
	go test $(GO_TEST_FLAGS) -count=1 -tags integration -timeout 20m ./test/integration/...

# The e2e and chaos suites' environments audit what each component's
# service account asks of the API server into RBAC_USAGE_DIR (test-e2e
# starts it afresh); test-rbac then fails on any permission of
# deploy/member/rbac.yaml none of them used.
RBAC_USAGE_DIR ?= $(CURDIR)/_output/rbac-usage

.PHONY: test-e2e
test-e2e: control-plane build operators
	rm -rf $(RBAC_USAGE_DIR)
	CALDERA_RBAC_USAGE_DIR=$(RBAC_USAGE_DIR) go test $(GO_TEST_FLAGS) -count=1 -tags e2e -timeout 20m ./test/e2e/...

## test-chaos: faults injected under load, each once (docs/reliability.md).
.PHONY: test-chaos
test-chaos: control-plane build
	CALDERA_RBAC_USAGE_DIR=$(RBAC_USAGE_DIR) go test $(GO_TEST_FLAGS) -count=1 -tags chaos -timeout 15m ./test/chaos/

## test-rbac: fail on any permission of deploy/member/rbac.yaml or of
## deploy/global/karmada/karmada-rbac.yaml that no component used in the e2e and
## chaos suites run before it, or any request refused.
.PHONY: test-rbac
test-rbac:
	CALDERA_RBAC_USAGE_DIR=$(RBAC_USAGE_DIR) go test $(GO_TEST_FLAGS) -count=1 -tags rbacusage -v -run '^Test(Member|Global)RBACIsAllUsed$$' ./test/rbacusage/

## chaos-long: every fault CHAOS_REPEAT times; the figures go to
## _output/chaos.md (a member's faults) and _output/chaos-federation.md.
CHAOS_REPEAT ?= 20
.PHONY: chaos-long
chaos-long: control-plane build
	mkdir -p _output
	go test -count=1 -tags chaos -timeout 6h -v ./test/chaos/ -args -chaos.profile=long -chaos.repeat=$(CHAOS_REPEAT) -chaos.report=$(CURDIR)/_output/chaos.md

## images: the container images of every binary, for linux/amd64 and linux/arm64,
## built without a container engine into the OCI layout _output/images (docs/install.md).
IMAGE_REGISTRY ?= ghcr.io/caldera-sh
IMAGE_TAG ?= v0.1.0
.PHONY: images
images:
	go run ./hack/images -out _output/images -registry $(IMAGE_REGISTRY) -tag $(IMAGE_TAG)

## test-images: build the images and check each one's platforms, entrypoint and user.
## pin-images: name the images make images built by tag and digest in the
## charts' values, and render deploy/ from the charts again.
.PHONY: pin-images
pin-images: images
	go run ./hack/images/pin -images _output/images/images.txt
	go test ./deploy/helm -run '^TestManifestsAreTheCharts$$' -update

.PHONY: test-images
test-images: images
	go test -count=1 -tags images ./test/images/

## test-karmada: the federation end-to-end tests on a real Karmada (opt-in, not in make test):
## KARMADA_BIN=<folder of Karmada's binaries> KARMADA_SRC=<the Karmada source tree they were built from>;
## see docs/testing.md.
.PHONY: test-karmada
test-karmada: control-plane build
	@if [ -z "$(KARMADA_BIN)" ] || [ -z "$(KARMADA_SRC)" ]; then echo "make test-karmada needs KARMADA_BIN and KARMADA_SRC (docs/testing.md)"; exit 2; fi
	CALDERA_KARMADA_BIN="$(abspath $(KARMADA_BIN))" CALDERA_KARMADA_SRC="$(abspath $(KARMADA_SRC))" \
		go test $(GO_TEST_FLAGS) -count=1 -tags e2e -timeout 90m -v -run '^TestFederation' ./test/e2e/

## test-prometheus: the usage plugin's Prometheus source against a real Prometheus (opt-in,
## not in make test: the first build of Prometheus takes several minutes); docs/testing.md.
.PHONY: test-prometheus
test-prometheus: control-plane build
	hack/build-prometheus.sh
	go test $(GO_TEST_FLAGS) -count=1 -tags prometheus -timeout 40m -v ./test/integration/prometheus/

## bench: run the Go benchmarks and the scheduler benchmark at its small size.
.PHONY: bench
bench: bench-perf
	go test -run '^$$' -bench . -benchmem ./...

## bench-perf: the scheduler benchmark (test/perf), both schedulers; PERF_ARGS adds
## flags, e.g. PERF_ARGS="-workload=gangs -size=medium".
.PHONY: bench-perf
bench-perf: control-plane build
	go test -tags perf -count=1 -timeout 60m -v -run '^TestPerf$$' ./test/perf/ -args -size=small -results=$(CURDIR)/_output/perf $(PERF_ARGS)

## run: start the local environment (Ctrl-C stops it).
.PHONY: run
run: control-plane build
	$(BIN)/calderactl local up

.PHONY: help
help:
	@grep -E '^## ' Makefile | sed 's/^## //'
