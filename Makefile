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

## build: build every binary into bin/.
.PHONY: build
build:
	go build -o $(BIN)/ ./cmd/...

## control-plane: build (or reuse from the cache) etcd, kube-apiserver, kwok, ...
.PHONY: control-plane
control-plane:
	hack/build-control-plane.sh

$(CONTROLLER_GEN): hack/tools/go.mod hack/tools/go.sum
	@mkdir -p $(BIN)
	cd hack/tools && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

## generate: regenerate deepcopy functions and CRD manifests from the API types.
.PHONY: generate
generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/... paths=./pkg/scheduler/apis/...
	rm -f deploy/crds/*.yaml
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/... output:crd:artifacts:config=deploy/crds

## verify: fail when generated files are stale, or on gofmt or go vet findings.
.PHONY: verify
verify: $(CONTROLLER_GEN) lint
	CONTROLLER_GEN=$(CONTROLLER_GEN) hack/verify-generated.sh

## lint: gofmt and go vet (with every build tag the tests use).
.PHONY: lint
lint:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	go vet -tags integration,e2e ./...

## test: verify, then unit, integration and end-to-end tests.
.PHONY: test
test: verify test-unit test-integration test-e2e

.PHONY: test-unit
test-unit:
	go test $(GO_TEST_FLAGS) ./...

.PHONY: test-integration
test-integration: control-plane build
	go test $(GO_TEST_FLAGS) -tags integration -timeout 20m ./test/integration/...

.PHONY: test-e2e
test-e2e: control-plane build
	go test $(GO_TEST_FLAGS) -tags e2e -timeout 20m ./test/e2e/...

## bench: run the Go benchmarks.
.PHONY: bench
bench:
	go test -run '^$$' -bench . -benchmem ./...

## run: start the local environment (Ctrl-C stops it).
.PHONY: run
run: control-plane build
	$(BIN)/calderactl local up

.PHONY: help
help:
	@grep -E '^## ' Makefile | sed 's/^## //'
