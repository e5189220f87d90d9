#!/usr/bin/env bash
# Builds the Helm command line the tests install the charts with (as
# docs/install.md tells users to), from the Go module proxy at the version
# hack/tools/helm pins, once: cached in the user's cache directory keyed by
# version and linked into ./bin.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${root}/hack/tools/helm"
version="$(cd "${tools}" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' helm.sh/helm/v4)"
cache_root="${CALDERA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/caldera}"
cache="${cache_root}/bin/helm-${version}"
bin="${root}/bin"
mkdir -p "${cache}" "${bin}"

start=$(date +%s)
log() { printf '[build-helm %4ds] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }

if [ -x "${cache}/helm" ]; then
  log "helm ${version}: cached"
else
  log "helm ${version}: building"
  (cd "${tools}" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o "${cache}/helm.new" helm.sh/helm/v4/cmd/helm)
  mv "${cache}/helm.new" "${cache}/helm"
  log "helm ${version}: built"
fi
ln -sfn "${cache}/helm" "${bin}/helm"
