#!/usr/bin/env bash
# Prints deploy/crds/kustomization.yaml: every CRD file of deploy/crds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../deploy/crds"
echo "# Every Caldera CRD: kubectl apply --server-side -k deploy/crds"
echo "apiVersion: kustomize.config.k8s.io/v1beta1"
echo "kind: Kustomization"
echo "resources:"
for f in *_*.yaml; do echo "  - ${f}"; done
