#!/usr/bin/env bash
# Regenerates code and manifests with controller-gen: deepcopy functions
# (objects), CRD YAML and the manager's RBAC role (manifests), or both.
# Used by `make generate`, `make manifests` and the drift check in hack/.
#   hack/generate.sh [objects|manifests|all] [repo-root]
set -euo pipefail
what=${1:-all}
root=$(cd "${2:-$(dirname "$0")/..}" && pwd)
cg=$("$(dirname "$0")/tool.sh" controller-gen)
cd "$root"
if [[ $what == objects || $what == all ]]; then
  "$cg" object:headerFile=hack/boilerplate.go.txt paths=./api/...
fi
if [[ $what == manifests || $what == all ]]; then
  "$cg" rbac:roleName=manager-role crd:allowDangerousTypes=true paths=./... \
    output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
  # The Helm chart carries the same CRDs and the same manager role.
  rm -f charts/edgeplane/crds/*.yaml
  cp config/crd/bases/*.yaml charts/edgeplane/crds/
  cp config/rbac/role.yaml charts/edgeplane/files/manager-role.yaml
fi
