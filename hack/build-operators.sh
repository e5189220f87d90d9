#!/usr/bin/env bash
# Builds the batch operators whose Volcano integrations the e2e tests drive
# against Caldera (the KubeRay operator), from the Go module proxy at pinned
# versions, once. Like the control-plane binaries they are cached in the
# user's cache directory keyed by version and linked into ./bin, with the
# CRDs the operator serves beside them.
set -euo pipefail

KUBERAY_VERSION="${KUBERAY_VERSION:-v1.5.0}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${CALDERA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/caldera}"
cache="${cache_root}/bin/kuberay-${KUBERAY_VERSION}"
bin="${root}/bin"
mkdir -p "${cache}" "${bin}"

start=$(date +%s)
log() { printf '[build-operators %4ds] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

if [ -x "${cache}/ray-operator" ] && [ -d "${cache}/crds" ]; then
  log "ray-operator ${KUBERAY_VERSION}: cached"
else
  log "ray-operator ${KUBERAY_VERSION}: building"
  w="$(mktemp -d)"
  (
    cd "$w"
    go mod init caldera.local/kuberay-build >/dev/null 2>&1
    go mod edit -require="github.com/ray-project/kuberay/ray-operator@${KUBERAY_VERSION}"
    go mod download github.com/ray-project/kuberay/ray-operator
    # The operator's own go.mod decides its dependencies' versions.
    src="$(go list -m -f '{{.Dir}}' github.com/ray-project/kuberay/ray-operator)"
    cp -r "${src}" op && chmod -R u+w op
    cd op
    go build -trimpath -ldflags "-s -w" -o "${cache}/ray-operator" .
    rm -rf "${cache}/crds" && mkdir -p "${cache}/crds"
    cp config/crd/bases/*.yaml "${cache}/crds/"
  )
  rm -rf "$w"
  log "ray-operator ${KUBERAY_VERSION}: built"
fi
ln -sfn "${cache}/ray-operator" "${bin}/ray-operator"
ln -sfn "${cache}/crds" "${bin}/kuberay-crds"
log "ray-operator in ${bin} -> ${cache}"
