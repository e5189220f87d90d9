#!/usr/bin/env bash
# Builds the control-plane binaries that integration and e2e tests run against
# (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl, kwok)
# from the Go module proxy at pinned versions, once. The binaries are cached in
# the user's cache directory keyed by version and linked into ./bin, so a fresh
# clone on the same machine reuses them.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${CALDERA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/caldera}"
key="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
cache="${cache_root}/bin/${key}"
bin="${root}/bin"
mkdir -p "${cache}" "${bin}"

start=$(date +%s)
log() { printf '[build-control-plane %4ds] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }

staging_minor="v0.${K8S_VERSION#v1.}"   # v1.37.2 -> v0.37.2
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

have() { # have <binary> <version-substring>
  [ -x "${cache}/$1" ] || return 1
  local flag=(--version)
  [ "$1" = kubectl ] && flag=(version --client)   # kubectl has no --version
  "${cache}/$1" "${flag[@]}" 2>/dev/null | grep -q -- "$2"
}

build_etcd() {
  if have etcd "${ETCD_VERSION#v}"; then log "etcd ${ETCD_VERSION}: cached"; return; fi
  log "etcd ${ETCD_VERSION}: building"
  local w; w="$(mktemp -d)"
  (
    cd "$w"
    go mod init caldera.local/etcd-build >/dev/null 2>&1
    go mod edit -require="go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
    go mod download go.etcd.io/etcd/server/v3
    cat > tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
    go mod tidy >/dev/null 2>&1 || true
    go build -trimpath -o "${cache}/etcd" go.etcd.io/etcd/server/v3
  )
  rm -rf "$w"
  log "etcd ${ETCD_VERSION}: built"
}

build_kwok() {
  if have kwok "${KWOK_VERSION#v}"; then log "kwok ${KWOK_VERSION}: cached"; return; fi
  log "kwok ${KWOK_VERSION}: building"
  GOBIN="${cache}" go install "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  log "kwok ${KWOK_VERSION}: built"
}

build_kube() {
  local wanted=(kube-apiserver kube-scheduler kube-controller-manager kubectl)
  local missing=()
  for b in "${wanted[@]}"; do
    if have "$b" "${K8S_VERSION}"; then log "$b ${K8S_VERSION}: cached"; else missing+=("$b"); fi
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  local w; w="$(mktemp -d)"
  log "kubernetes ${K8S_VERSION}: preparing wrapper module"
  (
    cd "$w"
    go mod init caldera.local/kube-build >/dev/null 2>&1
    go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" > dl.json
    gomod="$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' dl.json)"
    # Replace every staging module with its published version, as k8s's own
    # go.mod does with local paths.
    grep -oE '^[[:space:]]*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" \
      | awk '{print $1}' | sort -u > staging.txt
    log "kubernetes ${K8S_VERSION}: $(wc -l < staging.txt) staging modules"
    go mod edit -require="k8s.io/kubernetes@${K8S_VERSION}"
    while read -r m; do
      go mod edit -replace="${m}=${m}@${staging_minor}"
    done < staging.txt
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
    go mod tidy >/dev/null
    ld="-s -w"
    minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"   # v1.37.2 -> 37
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld="$ld -X ${p}.gitVersion=${K8S_VERSION} -X ${p}.gitMajor=1 -X ${p}.gitMinor=${minor}"
    done
    for b in "${missing[@]}"; do
      log "$b ${K8S_VERSION}: building"
      go build -trimpath -ldflags "$ld" -o "${cache}/$b" "k8s.io/kubernetes/cmd/$b"
      log "$b ${K8S_VERSION}: built"
    done
  )
  rm -rf "$w"
}

build_etcd
build_kwok
build_kube

for b in etcd kwok kube-apiserver kube-scheduler kube-controller-manager kubectl; do
  ln -sf "${cache}/$b" "${bin}/$b"
done
log "binaries in ${bin} -> ${cache}"
