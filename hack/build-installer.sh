#!/usr/bin/env bash
# Writes the release bundle: every object of config/default (CRDs, the Lease
# namespace, RBAC, the manager, the edge hub, their Services and policies)
# with the manager image set (the hub runs the same image), as one file to
# apply.
#   hack/build-installer.sh IMAGE OUT
set -euo pipefail
image=${1:?usage: hack/build-installer.sh IMAGE OUT}
out=${2:?usage: hack/build-installer.sh IMAGE OUT}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kubectl="$("$root/hack/envtest-assets.sh")/kubectl"
mkdir -p "$(dirname "$out")"
{
  echo "# edgeplane release bundle, manager image $image."
  echo "#   kubectl apply --server-side -f install.yaml"
  echo "# The facade needs the TLS Secret edgeplane-facade-tls in edgeplane-system (README: Install on a cluster)."
  echo "# The edge hub advertises a placeholder URL; expose the Service edgeplane-hub to devices (TLS passthrough) and set it:"
  echo "#   kubectl -n edgeplane-system set env deployment/edgeplane-hub HUB_ADVERTISE_URL=https://HOST:PORT"
  "$kubectl" kustomize "$root/config/default" | sed "s#image: edgeplane/manager:latest#image: $image#"
} >"$out"
grep -q "image: $image" "$out" || { echo "build-installer: the manager image was not set" >&2; exit 1; }
echo "$out"
