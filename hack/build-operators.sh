#!/usr/bin/env bash
# Builds the batch operators whose Volcano integrations the e2e tests drive
# against Caldera (KubeRay, the Kubeflow Training Operator), from the Go
# module proxy at pinned versions, once. Like the control-plane binaries
# they are cached in the user's cache directory keyed by version and
# linked into ./bin, with the CRDs each operator serves beside it.
set -euo pipefail

KUBERAY_VERSION="${KUBERAY_VERSION:-v1.5.0}"
TRAINING_OPERATOR_VERSION="${TRAINING_OPERATOR_VERSION:-v1.8.1}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${CALDERA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/caldera}"
bin="${root}/bin"
mkdir -p "${bin}"

start=$(date +%s)
log() { printf '[build-operators %4ds] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

# operator NAME MODULE VERSION PACKAGE CRD_DIR: builds PACKAGE of MODULE at
# VERSION with the module's own go.mod deciding its dependencies, into
# bin/NAME, and copies the CRDs of CRD_DIR to bin/NAME-crds.
operator() {
  local name="$1" module="$2" version="$3" pkg="$4" crds="$5"
  local cache="${cache_root}/bin/${name}-${version}"
  if [ -x "${cache}/${name}" ] && [ -d "${cache}/crds" ]; then
    log "${name} ${version}: cached"
  else
    log "${name} ${version}: building"
    mkdir -p "${cache}"
    local w
    w="$(mktemp -d)"
    (
      cd "$w"
      go mod init caldera.local/operator-build >/dev/null 2>&1
      go mod edit -require="${module}@${version}"
      go mod download "${module}"
      src="$(go list -m -f '{{.Dir}}' "${module}")"
      cp -r "${src}" op && chmod -R u+w op
      cd op
      go build -trimpath -ldflags "-s -w" -o "${cache}/${name}" "${pkg}"
      rm -rf "${cache}/crds" && mkdir -p "${cache}/crds"
      find "${crds}" -maxdepth 1 -name '*.yaml' ! -name kustomization.yaml -exec cp {} "${cache}/crds/" \;
    )
    rm -rf "$w"
    log "${name} ${version}: built"
  fi
  ln -sfn "${cache}/${name}" "${bin}/${name}"
  ln -sfn "${cache}/crds" "${bin}/${name}-crds"
}

operator ray-operator github.com/ray-project/kuberay/ray-operator "${KUBERAY_VERSION}" . config/crd/bases
operator training-operator github.com/kubeflow/training-operator "${TRAINING_OPERATOR_VERSION}" ./cmd/training-operator.v1 manifests/base/crds
log "operators in ${bin}"
