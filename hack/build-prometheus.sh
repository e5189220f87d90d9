#!/usr/bin/env bash
# Builds Prometheus, which the opt-in Prometheus tier of the tests runs
# (make test-prometheus; docs/testing.md), from the Go module proxy at the
# version pinned here, once: cached in the user's cache directory keyed by
# version and linked into ./bin. The first build takes several minutes.
set -euo pipefail

version="v0.316.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${CALDERA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/caldera}"
cache="${cache_root}/bin/prometheus-${version}"
bin="${root}/bin"
mkdir -p "${cache}" "${bin}"

start=$(date +%s)
log() { printf '[build-prometheus %4ds] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }

if [ -x "${cache}/prometheus" ]; then
  log "prometheus ${version}: cached"
else
  log "prometheus ${version}: building"
  work="$(mktemp -d)"
  trap 'rm -rf "${work}"' EXIT
  (cd "${work}" && CGO_ENABLED=0 GOTOOLCHAIN=local GOBIN="${work}" go install -trimpath -ldflags "-s -w" "github.com/prometheus/prometheus/cmd/prometheus@${version}")
  mv "${work}/prometheus" "${cache}/prometheus"
  log "prometheus ${version}: built"
fi
ln -sfn "${cache}/prometheus" "${bin}/prometheus"
