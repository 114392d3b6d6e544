#!/usr/bin/env bash
# Regenerates code and manifests with controller-gen: deepcopy functions
# and server-side apply configurations (objects), CRD YAML and the
# manager's and the edge hub's RBAC roles (manifests), or both.
# Used by `make generate`, `make manifests` and the drift check in hack/.
#   hack/generate.sh [objects|manifests|all] [repo-root]
set -euo pipefail
what=${1:-all}
root=$(cd "${2:-$(dirname "$0")/..}" && pwd)
cg=$("$(dirname "$0")/tool.sh" controller-gen)
cd "$root"
# split_roles FILE NS=DEST...: keeps FILE's ClusterRole in FILE and moves
# each namespaced Role to the DEST of its namespace; a Role of any other
# namespace is an error.
split_roles() {
  local file=$1 parts f ns m dest
  shift
  parts=$(mktemp -d)
  (cd "$parts" && csplit -s -z -f doc "$root/$file" '/^---$/' '{*}')
  : >"$file"
  for f in "$parts"/doc*; do
    ns=$(sed -n 's/^  namespace: //p' "$f")
    if [[ -z $ns ]]; then
      cat "$f" >>"$file"
      continue
    fi
    dest=""
    for m in "$@"; do
      [[ ${m%%=*} == "$ns" ]] && dest=${m#*=}
    done
    if [[ -z $dest ]]; then
      echo "generate: a Role of $file in namespace $ns has no place in config/" >&2
      rm -rf "$parts"
      exit 1
    fi
    cp "$f" "$dest"
  done
  rm -rf "$parts"
}
if [[ $what == objects || $what == all ]]; then
  "$cg" object:headerFile=hack/boilerplate.go.txt paths=./api/...
  # Typed apply configurations for server-side apply; regenerated from
  # nothing, so a removed type leaves no file behind.
  rm -rf api/v1alpha1/applyconfiguration
  "$cg" applyconfiguration:headerFile=hack/boilerplate.go.txt paths=./api/...
fi
if [[ $what == manifests || $what == all ]]; then
  # Two roles, each from its own packages' markers: the manager's
  # (manager-role) and the edge hub's (hub-role, its own Deployment and
  # ServiceAccount), so that neither gains the other's permissions. A
  # package with markers in neither list would lose them silently.
  manager_paths="./api/...;./apiserver/...;./controllers/..."
  hub_paths="./internal/hub/..."
  stray=$(grep -rl --include='*.go' --exclude='*_test.go' --exclude-dir=.git --exclude-dir=bin --exclude-dir=dist \
    '+kubebuilder:rbac' . | grep -v -E '^\./(api|apiserver|controllers|internal/hub)/' || true)
  if [[ -n $stray ]]; then
    echo "generate: RBAC markers outside the manager's and the hub's packages; add them to hack/generate.sh:" >&2
    echo "$stray" >&2
    exit 1
  fi
  "$cg" rbac:roleName=manager-role crd:allowDangerousTypes=true "paths=$manager_paths" \
    output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
  "$cg" rbac:roleName=hub-role "paths=$hub_paths" output:rbac:artifacts:config=config/hub
  # Markers with namespace= make namespaced Roles, which controller-gen
  # writes into role.yaml too; they go to files of their own, out of reach
  # of config/system's namespace transformer.
  split_roles config/rbac/role.yaml edgeplane-node-lease=config/namespaced-rbac/role_lease.yaml \
    default=config/namespaced-rbac/role_facade.yaml edgeplane-system=config/namespaced-rbac/role_system.yaml
  split_roles config/hub/role.yaml edgeplane-node-lease=config/hub/role_lease.yaml \
    edgeplane-system=config/hub/role_system.yaml
  # The Helm chart carries the same CRDs and the same roles.
  rm -f charts/edgeplane/crds/*.yaml
  cp config/crd/bases/*.yaml charts/edgeplane/crds/
  cp config/rbac/role.yaml charts/edgeplane/files/manager-role.yaml
  cp config/namespaced-rbac/role_lease.yaml charts/edgeplane/files/manager-role-lease.yaml
  cp config/namespaced-rbac/role_facade.yaml charts/edgeplane/files/manager-role-facade.yaml
  cp config/namespaced-rbac/role_system.yaml charts/edgeplane/files/manager-role-system.yaml
  cp config/hub/role.yaml charts/edgeplane/files/hub-role.yaml
  cp config/hub/role_lease.yaml charts/edgeplane/files/hub-role-lease.yaml
  cp config/hub/role_system.yaml charts/edgeplane/files/hub-role-system.yaml
fi
