#!/usr/bin/env bash
# Runs the fill-the-cluster experiment on GPU cards (fill-cards-*.yaml; or
# fill-<policy>.yaml, such as POLICIES="vgpu-binpack vgpu-spread",
# "mig-binpack mig-spread" or dra-binpack) for
# each scoring policy and each seed in SEEDS (default 42 to 51, ten draws,
# as Weng et al. do), on the Alibaba 2023 GPU trace in TRACE (default
# ../shared/traces/alibaba-gpu-v2023 next to the repository), and prints
# each run's GPU allocation ratio (and, on virtual GPUs, MIG cards and DRA
# devices, the share of the cards' memory their shares hold) and each
# policy's mean.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
trace="${TRACE:-${root}/../shared/traces/alibaba-gpu-v2023}"
seeds="${SEEDS:-42 43 44 45 46 47 48 49 50 51}"
policies="${POLICIES:-binpack spread fgd}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
go build -o "${work}/calderactl" "${root}/cmd/calderactl"
printf '%-12s %5s %12s %8s %10s\n' policy seed allocation held wall
for p in ${policies}; do
  f="${root}/hack/sim/fill-cards-${p}.yaml"
  [ -f "${f}" ] || f="${root}/hack/sim/fill-${p}.yaml"
  sed "s|TRACE/|${trace}/|" "${f}" > "${work}/${p}.yaml"
  sum=0 hsum=0 n=0
  for seed in ${seeds}; do
    out="$("${work}/calderactl" sim "${work}/${p}.yaml" --seed "${seed}" -o json)"
    ratio="$(sed -n 's/.*"PeakGPUAllocation": *\([0-9.e-]*\).*/\1/p' <<<"${out}")"
    held="$(sed -n 's/.*"CardMemoryHeld": *\([0-9.e-]*\).*/\1/p' <<<"${out}")"
    wall="$(sed -n 's/.*"Wall": *\([0-9]*\).*/\1/p' <<<"${out}")"
    printf '%-12s %5s %11.2f%% %7.2f%% %9.1fs\n' "${p}" "${seed}" "$(awk -v r="${ratio}" 'BEGIN{print 100*r}')" "$(awk -v h="${held:-0}" 'BEGIN{print 100*h}')" "$(awk -v w="${wall}" 'BEGIN{print w/1e9}')"
    sum="$(awk -v s="${sum}" -v r="${ratio}" 'BEGIN{print s+r}')"
    hsum="$(awk -v s="${hsum}" -v h="${held:-0}" 'BEGIN{print s+h}')"
    n=$((n + 1))
  done
  printf '%-12s %5s %11.2f%% %7.2f%%\n' "${p}" mean "$(awk -v s="${sum}" -v n="${n}" 'BEGIN{print 100*s/n}')" "$(awk -v s="${hsum}" -v n="${n}" 'BEGIN{print 100*s/n}')"
done
