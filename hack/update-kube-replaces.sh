#!/usr/bin/env bash
# k8s.io/kubernetes refers to its staging modules (k8s.io/api, ...) through
# local replace directives, which a dependent module must repeat with published
# versions. This regenerates those replace lines in go.mod from the go.mod of
# the k8s.io/kubernetes version required, so a version bump is one command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version="${1:-$(go list -m -f '{{.Version}}' k8s.io/kubernetes)}"
staging="v0.${version#v1.}"
gomod="$(go mod download -json "k8s.io/kubernetes@${version}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
go mod edit -require="k8s.io/kubernetes@${version}"
for m in $(grep -oE '^[[:space:]]*k8s\.io/[a-z0-9-]+ => \./staging' "${gomod}" | awk '{print $1}' | sort -u); do
  go mod edit -replace="${m}=${m}@${staging}"
done
go mod tidy
