#!/usr/bin/env bash
# Runs the "fill the cluster" scenarios of this directory on the Alibaba
# 2023 GPU trace in TRACE (default ../shared/traces/alibaba-gpu-v2023 next
# to the repository) and prints each summary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
trace="${TRACE:-${root}/../shared/traces/alibaba-gpu-v2023}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
go build -o "${work}/calderactl" "${root}/cmd/calderactl"
for s in fill-binpack fill-spread fill-reserve; do
  sed "s|TRACE/|${trace}/|" "${root}/hack/sim/${s}.yaml" > "${work}/${s}.yaml"
  "${work}/calderactl" sim "${work}/${s}.yaml" --jobs "${work}/${s}.csv"
done
