#!/usr/bin/env bash
# Regenerates code and manifests with controller-gen: deepcopy functions
# and server-side apply configurations (objects), CRD YAML and the
# manager's RBAC role (manifests), or both.
# Used by `make generate`, `make manifests` and the drift check in hack/.
#   hack/generate.sh [objects|manifests|all] [repo-root]
set -euo pipefail
what=${1:-all}
root=$(cd "${2:-$(dirname "$0")/..}" && pwd)
cg=$("$(dirname "$0")/tool.sh" controller-gen)
cd "$root"
if [[ $what == objects || $what == all ]]; then
  "$cg" object:headerFile=hack/boilerplate.go.txt paths=./api/...
  # Typed apply configurations for server-side apply; regenerated from
  # nothing, so a removed type leaves no file behind.
  rm -rf api/v1alpha1/applyconfiguration
  "$cg" applyconfiguration:headerFile=hack/boilerplate.go.txt paths=./api/...
fi
if [[ $what == manifests || $what == all ]]; then
  "$cg" rbac:roleName=manager-role crd:allowDangerousTypes=true paths=./... \
    output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
  # Markers with namespace= make namespaced Roles, which controller-gen
  # writes into role.yaml too; they go to config/namespaced-rbac, out of
  # reach of config/system's namespace transformer.
  parts=$(mktemp -d)
  (cd "$parts" && csplit -s -z -f doc "$root/config/rbac/role.yaml" '/^---$/' '{*}')
  : >config/rbac/role.yaml
  for f in "$parts"/doc*; do
    ns=$(sed -n 's/^  namespace: //p' "$f")
    case "$ns" in
      "") cat "$f" >>config/rbac/role.yaml ;;
      edgeplane-node-lease) cp "$f" config/namespaced-rbac/role_lease.yaml ;;
      default) cp "$f" config/namespaced-rbac/role_facade.yaml ;;
      *) echo "generate: a Role in namespace $ns has no place in config/" >&2; exit 1 ;;
    esac
  done
  rm -rf "$parts"
  # The Helm chart carries the same CRDs and the same manager roles.
  rm -f charts/edgeplane/crds/*.yaml
  cp config/crd/bases/*.yaml charts/edgeplane/crds/
  cp config/rbac/role.yaml charts/edgeplane/files/manager-role.yaml
  cp config/namespaced-rbac/role_lease.yaml charts/edgeplane/files/manager-role-lease.yaml
  cp config/namespaced-rbac/role_facade.yaml charts/edgeplane/files/manager-role-facade.yaml
fi
