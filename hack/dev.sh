#!/usr/bin/env bash
# make dev: the whole system on this machine, loopback only. Builds what it
# needs, starts a control plane (etcd + kube-apiserver configured for API
# aggregation, data in a temporary directory), the manager with the facade,
# a read replica of the facade behind kube-apiserver (its APIService, TLS,
# auth kubernetes), the edge hub in the manager, a handful of simulated
# devices that each join the hub with their own token (kubectl edge node add,
# edge-agent join) and talk to it alone, applies the samples, and waits.
# Ctrl-C stops it all.
# DEV_RUNTIME=docker adds a real node: an agent with the Docker Engine API
# runtime, joined to the hub like the others, on DOCKER_HOST when that answers, else on a private engine
# started by hack/engine.sh: Podman, or Docker Engine with DEV_ENGINE=docker.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
api_port="${DEV_API_PORT:-8090}"
agg_port="${DEV_AGGREGATED_PORT:-8091}"
hub_port="${DEV_HUB_PORT:-8444}"
nodes="${DEV_NODES:-4}"
runtime="${DEV_RUNTIME:-sim}"
[[ "$runtime" == sim || "$runtime" == docker ]] || { echo "DEV_RUNTIME=$runtime: want sim or docker" >&2; exit 2; }

echo "building the control-plane binaries (once) and edgeplane's binaries..."
assets="$(hack/envtest-assets.sh)"
export KUBEBUILDER_ASSETS="$assets"
go build -o bin/ ./cmd/manager ./cmd/edge-agent ./cmd/kubectl-edge ./hack/devcluster
kubectl="$assets/kubectl"

dir="$(mktemp -d "${TMPDIR:-/tmp}/edgeplane-dev.XXXXXX")"
pids=()
engine=""
cleanup() {
  trap - EXIT INT TERM
  echo
  echo "stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ -z "$engine" ]] || hack/engine.sh stop "$engine"
  rm -rf "$dir"
  echo "stopped; nothing left running."
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bin/devcluster --kubeconfig-out "$dir/kubeconfig" --aggregated-port "$agg_port" --facade-tls-dir "$dir/facade-tls" >"$dir/devcluster.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do [[ -s "$dir/kubeconfig" ]] && break; sleep 0.5; done
[[ -s "$dir/kubeconfig" ]] || { cat "$dir/devcluster.log"; echo "the control plane did not start" >&2; exit 1; }
export KUBECONFIG="$dir/kubeconfig"
"$kubectl" create namespace edgeplane-system >/dev/null

hub="https://127.0.0.1:$hub_port"
bin/manager --kubeconfig "$KUBECONFIG" --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 \
  --api-bind-address "127.0.0.1:$api_port" --api-namespace default --auth none \
  --hub-bind-address "127.0.0.1:$hub_port" --hub-advertise-url "$hub" \
  --node-grace-period 20s --reschedule-grace-period 1m >"$dir/manager.log" 2>&1 &
pids+=($!)
# The facade kube-apiserver proxies to: a read replica (no reconcilers) on
# TLS, trusting the identity kube-apiserver forwards; it sets its
# APIService's caBundle itself.
bin/manager --kubeconfig "$KUBECONFIG" --controllers=false --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 \
  --api-bind-address "127.0.0.1:$agg_port" --api-namespace default --auth kubernetes \
  --tls-cert-file "$dir/facade-tls/tls.crt" --tls-private-key-file "$dir/facade-tls/tls.key" \
  --apiservice v1.facade.edge.edgeplane.io >"$dir/aggregated.log" 2>&1 &
pids+=($!)
# Each device is added as an operator would (kubectl edge node add prints
# the one line to run on the device), by its name, type, arch and labels,
# and joins the hub with its own token; the simulator then plays every
# device with its own identity, and each reports its address (10.77.0.N:7200).
for _ in $(seq 1 120); do "$kubectl" -n edgeplane-system get configmap edgeplane-hub-info >/dev/null 2>&1 && break; sleep 0.5; done
add() { # add NAME TYPE ARCH LABELS: prints the device's join line
  bin/kubectl-edge node add "$1" --type "$2" --arch "$3" --labels "$4" 2>/dev/null
}
types=(linux sylixos) arches=(amd64 arm64)
for i in $(seq 1 "$nodes"); do
  t="${types[$(((i - 1) % 2))]}" a="${arches[$(((i - 1) % 2))]}"
  name="$(printf 'edge-%s-%02d' "$t" "$i")"
  line="$(add "$name" "$t" "$a" site=plant-a)"
  read -r -a join <<<"${line#edge-agent }"
  bin/edge-agent "${join[@]}" --run=false --state-dir "$dir/devices/$name" >>"$dir/joins.log" 2>&1
done
bin/edge-agent --hub-identities "$dir/devices" --runtime sim --nodes "$nodes" --types linux,sylixos --arches amd64,arm64 \
  --labels site=plant-a --renew-interval 5s --start-delay 2s --metrics-interval 5s --fail-images '^broken' >"$dir/agent.log" 2>&1 &
pids+=($!)

want_online="$nodes"
if [[ "$runtime" == docker ]]; then
  if [[ -n "${DOCKER_HOST:-}" ]] && curl -fs --unix-socket "${DOCKER_HOST#unix://}" http://engine/_ping >/dev/null 2>&1; then
    echo "using the engine at $DOCKER_HOST"
  else
    echo "starting a private ${DEV_ENGINE:-podman} engine..."
    engine="$dir/engine"
    export "$(hack/engine.sh start "$engine" "${DEV_ENGINE:-podman}")"
  fi
  line="$(add edge-docker-01 linux "$(go env GOARCH)" site=lab)"
  read -r -a join <<<"${line#edge-agent }"
  KUBECONFIG= bin/edge-agent "${join[@]}" --runtime docker --runtime-endpoint "$DOCKER_HOST" \
    --image-registry edgeplane.local --renew-interval 5s --metrics-interval 5s \
    --state-dir "$dir/agent-state" >"$dir/agent-docker.log" 2>&1 &
  pids+=($!)
  want_online=$((nodes + 1))
fi

url="http://127.0.0.1:$api_port"
for _ in $(seq 1 120); do curl -fs "$url/readyz" >/dev/null 2>&1 && break; sleep 0.5; done
curl -fs "$url/readyz" >/dev/null || { tail -20 "$dir/manager.log"; echo "the manager did not become ready" >&2; exit 1; }

# Apply the samples once every node is online, so that placement sees them all.
for _ in $(seq 1 120); do
  online="$("$kubectl" get edgenodes -o jsonpath='{range .items[*]}{.status.status}{"\n"}{end}' 2>/dev/null | grep -c '^online$' || true)"
  [[ "$online" -ge "$want_online" ]] && break
  sleep 0.5
done
"$kubectl" apply -f config/samples/edge_v1alpha1_edgeservice.yaml -f config/samples/edge_v1alpha1_edgeservice_dynamic.yaml \
  -f config/samples/edge_v1alpha1_provisiontemplate.yaml >/dev/null
[[ "$runtime" != docker ]] || "$kubectl" apply -f config/samples/edge_v1alpha1_edgeservice_docker.yaml >/dev/null
"$kubectl" wait --for=condition=Available --timeout=60s edgeservice --all >/dev/null 2>&1 || true
"$kubectl" wait --for=condition=Available --timeout=60s apiservice/v1.facade.edge.edgeplane.io >/dev/null ||
  { tail -20 "$dir/aggregated.log"; echo "the facade's APIService did not become Available" >&2; exit 1; }
apiserver="$("$kubectl" config view --minify -o jsonpath='{.clusters[0].cluster.server}')"

cat <<MSG

edgeplane is running on this machine.
  console:     $url/console/
               (through kube-apiserver: KUBECONFIG=$KUBECONFIG $kubectl proxy, then
                http://127.0.0.1:8001/apis/facade.edge.edgeplane.io/v1/console/)
  facade:      $url/api/v1   (OpenAPI: $url/api/v1/openapi.json)
  edge hub:    $hub   (devices join it: KUBECONFIG=$KUBECONFIG bin/kubectl-edge node add NAME)
  aggregated:  ${apiserver%/}/apis/facade.edge.edgeplane.io/v1/api/v1   (the same facade through kube-apiserver)
  kubeconfig:  $KUBECONFIG
  logs:        $dir/{devcluster,manager,aggregated,joins,agent,agent-docker}.log

Try:
  curl -s '$url/api/v1/node?pageSize=-1'
  KUBECONFIG=$KUBECONFIG $kubectl get --raw '/apis/facade.edge.edgeplane.io/v1/api/v1/node?pageSize=-1'
  KUBECONFIG=$KUBECONFIG $kubectl get edge -A
  curl -s "$url/api/v1/container/service?serviceIds[]=\$(KUBECONFIG=$KUBECONFIG $kubectl get es sensor-gateway -o jsonpath='{.metadata.uid}')&pageNum=1&pageSize=10"
MSG
if [[ "$runtime" == docker ]]; then
  cat <<MSG

The real node edge-docker-01 runs lab-box on the engine at $DOCKER_HOST:
  curl -s "$url/api/v1/container/service?serviceIds[]=\$(KUBECONFIG=$KUBECONFIG $kubectl get es lab-box -o jsonpath='{.metadata.uid}')"
  curl -s --unix-socket ${DOCKER_HOST#unix://} http://engine/containers/json
MSG
fi
cat <<MSG

Ctrl-C stops everything.
MSG
while true; do
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "a process stopped; see the logs in $dir" >&2; exit 1; }
  done
  sleep 1
done
