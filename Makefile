# Caldera. `make run` starts a local control plane; `make test` runs every test.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

export GOTOOLCHAIN := local
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen

.PHONY: all
all: build

$(CONTROLLER_GEN): hack/tools/go.mod hack/tools/go.sum
	@mkdir -p $(BIN)
	cd hack/tools && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

## generate: regenerate deepcopy functions and CRD manifests from the API types.
.PHONY: generate
generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...
	rm -f deploy/crds/*.yaml
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/... output:crd:artifacts:config=deploy/crds
