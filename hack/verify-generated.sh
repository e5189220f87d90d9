#!/usr/bin/env bash
# Fails when a generated file (deepcopy functions, CRD manifests) differs from
# what the generators produce from the current API types: regenerates into a
# scratch copy of the tree and compares, leaving the working tree untouched.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
controller_gen="${CONTROLLER_GEN:-${root}/bin/controller-gen}"
scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT

cp -r "${root}/go.mod" "${root}/go.sum" "${root}/apis" "${scratch}/"
mkdir -p "${scratch}/hack" "${scratch}/deploy/crds" "${scratch}/pkg/scheduler" "${scratch}/pkg/federation" "${scratch}/test/crds/karmada" "${scratch}/test/crds/clusterapi"
cp -r "${root}/pkg/scheduler/config" "${scratch}/pkg/scheduler/"
cp -r "${root}/pkg/federation/karmada" "${root}/pkg/federation/clusterapi" "${scratch}/pkg/federation/"
cp "${root}/hack/boilerplate.go.txt" "${scratch}/hack/"
find "${scratch}/apis" "${scratch}/pkg" -name 'zz_generated.*' -delete
(
  cd "${scratch}"
  "${controller_gen}" object:headerFile=hack/boilerplate.go.txt paths=./apis/... paths=./pkg/scheduler/config/... paths=./pkg/federation/karmada/... paths=./pkg/federation/clusterapi/...
  "${controller_gen}" crd:generateEmbeddedObjectMeta=true paths=./apis/... output:crd:artifacts:config=deploy/crds
  "${controller_gen}" crd:generateEmbeddedObjectMeta=true paths=./pkg/federation/karmada/... output:crd:artifacts:config=test/crds/karmada
  "${controller_gen}" crd:generateEmbeddedObjectMeta=true paths=./pkg/federation/clusterapi/... output:crd:artifacts:config=test/crds/clusterapi
)

status=0
if ! diff -r -u "${root}/apis" "${scratch}/apis"; then status=1; fi
if ! diff -r -u "${root}/pkg/scheduler/config" "${scratch}/pkg/scheduler/config"; then status=1; fi
if ! diff -r -u -x embed.go -x kustomization.yaml "${root}/deploy/crds" "${scratch}/deploy/crds"; then status=1; fi
if ! diff -r -u "${root}/pkg/federation/karmada" "${scratch}/pkg/federation/karmada"; then status=1; fi
if ! diff -r -u -x embed.go "${root}/test/crds/karmada" "${scratch}/test/crds/karmada"; then status=1; fi
if ! diff -r -u "${root}/pkg/federation/clusterapi" "${scratch}/pkg/federation/clusterapi"; then status=1; fi
if ! diff -r -u -x embed.go "${root}/test/crds/clusterapi" "${scratch}/test/crds/clusterapi"; then status=1; fi
if [ "${status}" -ne 0 ]; then
  echo >&2 "generated files are stale or were edited by hand: run 'make generate' and commit the result"
fi
exit "${status}"
