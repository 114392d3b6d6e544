#!/usr/bin/env bash
# A private container engine serving the Docker Engine API, for the tests
# and make dev, with its socket, storage, state and configuration in DIR,
# so it never touches the host's own engine.
#
#   hack/engine.sh start DIR [podman|docker]
#       installs the engine from Debian packages when absent, starts it,
#       imports the test images, prints DOCKER_HOST=unix://DIR/<engine>.sock
#   hack/engine.sh stop DIR
#       removes every container, stops the engine, removes DIR
#   hack/engine.sh down DIR / up DIR
#       stops the engine's API service, leaving its containers and state,
#       and starts it again (an engine restart, or an outage in between)
#
# podman (the default): Podman's API service, with a configuration a normal
# host accepts too: cgroupfs (no systemd needed), runc, events in a file,
# vfs storage, and default rlimits below the hard limits of sandboxes that
# refuse to raise them.
# docker: Docker Engine (dockerd) with its own containerd, on a bridge of its
# own (ep<hash of DIR>) and without touching iptables or sysctls, so it runs
# beside a host's Docker and leaves nothing behind; with live-restore, as
# an edge device should run it, so containers outlive a daemon restart
# (Podman's run under conmon, without a daemon).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
kind=${3:-podman}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: hack/engine.sh start DIR [podman|docker] | stop DIR | down DIR | up DIR" >&2; exit 2; }
[[ "$kind" == podman || "$kind" == docker ]] || { echo "engine: $kind: want podman or docker" >&2; exit 2; }
log() { echo "engine: $*" >&2; }

# TMPDIR: an engine's temporary files stay in its directory, not the
# caller's: Podman stages an image copy there (storage*) that a pull cut
# short by the engine's stop leaves behind, and Docker Engine's containerd
# dumps its stacks there (containerd.PID.stacks.log) when slow to stop.
podman_in() {
  CONTAINERS_CONF="$dir/containers.conf" CONTAINERS_STORAGE_CONF="$dir/storage.conf" \
    CONTAINERS_REGISTRIES_CONF="$dir/registries.conf" TMPDIR="$dir/tmp" podman "$@"
}

# install_packages installs what the engine needs from Debian packages,
# serialized with every other install of the project's scripts.
install_packages() {
  local pkgs=()
  if [[ "$kind" == podman ]]; then
    for p in podman conmon netavark aardvark-dns catatonit iptables; do pkgs+=("$p=podman"); done
  else
    pkgs+=(docker.io=dockerd iproute2=ip)
  fi
  # The image is one static binary: Debian's plain busybox is dynamic.
  pkgs+=(runc=runc curl=curl busybox-static)
  "$(dirname "$0")/apt-install.sh" "${pkgs[@]}" || {
    log "the engine's packages are missing, or their install failed; set EDGEPLANE_SKIP_ENGINE=1 to skip the suites that need a container engine"
    exit 1
  }
}

write_config() {
  mkdir -p "$dir/tmp" "$dir/run" "$dir/root" "$dir/net"
  cat >"$dir/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
log_driver = "k8s-file"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$dir/events.log"
runtime = "runc"
tmp_dir = "$dir/tmp"
[network]
network_config_dir = "$dir/net"
EOF
  cat >"$dir/storage.conf" <<EOF
[storage]
driver = "vfs"
runroot = "$dir/run"
graphroot = "$dir/root"
EOF
  # No registry is reachable here, and none is needed: images are imported.
  # A registry a test runs on loopback speaks plain HTTP (Docker allows
  # 127.0.0.0/8 by default; "127.0.0.1" matches it on any port).
  cat >"$dir/registries.conf" <<EOF
unqualified-search-registries = []
short-name-mode = "disabled"

[[registry]]
location = "127.0.0.1"
insecure = true
EOF
}

# import_images makes edgeplane.local/box:1 and :2 from Debian's static
# busybox: one binary and its applets, no base image, no registry. The
# default command sleeps, and exits at once on SIGTERM (wait is
# interrupted by the trap), so stopping takes no time.
import_images() {
  local root="$dir/image" bb=/bin/busybox
  mkdir -p "$root/bin"
  cp "$bb" "$root/bin/busybox"
  for applet in $("$bb" --list); do
    [[ "$applet" == busybox ]] || ln -sf busybox "$root/bin/$applet"
  done
  tar -C "$root" -cf "$dir/box.tar" bin
  local cli=(podman_in)
  [[ "$kind" == podman ]] || cli=(docker -H "unix://$dir/docker.sock")
  for tag in 1 2; do
    "${cli[@]}" import \
      --change 'ENV PATH=/bin' \
      --change "LABEL io.edgeplane.test-image=$tag" \
      --change 'CMD ["sh", "-c", "trap \"exit 0\" TERM; sleep 2147483647 & wait"]' \
      "$dir/box.tar" "edgeplane.local/box:$tag" >/dev/null 2>&1
  done
}

answers() { curl -fs --unix-socket "$1" http://engine/_ping >/dev/null 2>&1; }

start_podman() {
  write_config
  # setsid: the service outlives this script, and its pid is podman's own.
  setsid bash -c 'echo $$ >"$0/engine.pid"; CONTAINERS_CONF="$0/containers.conf" CONTAINERS_STORAGE_CONF="$0/storage.conf" CONTAINERS_REGISTRIES_CONF="$0/registries.conf" TMPDIR="$0/tmp" exec podman system service --time=0 "unix://$0/podman.sock"' "$dir" >"$dir/engine.log" 2>&1 </dev/null &
}

start_docker() {
  # A bridge of this engine's own, named and numbered from its directory,
  # so that engines of suites running side by side never share one. A
  # bridge left by a killed run whose directory is gone is removed.
  local sum bridge n
  for b in $(ip -o link show type bridge 2>/dev/null | sed -n 's/^[0-9]*: \(ep[0-9a-f]\{8\}\)[:@].*/\1/p'); do
    [[ -f "/run/edgeplane-engines/$b" && -d "$(cat "/run/edgeplane-engines/$b")" ]] || { ip link delete "$b" 2>/dev/null || true; rm -f "/run/edgeplane-engines/$b"; }
  done
  sum=$(echo -n "$dir" | sha256sum | cut -c1-8)
  bridge="ep$sum"
  mkdir -p /run/edgeplane-engines
  echo "$dir" >"/run/edgeplane-engines/$bridge"
  ip link add "$bridge" type bridge
  # A /24 in 10.213.0.0/16 that no other interface uses, from the hash on.
  n=$((16#${sum:0:2}))
  for _ in $(seq 0 255); do
    ip -4 -o addr show | grep -q " 10\.213\.$n\." || break
    n=$(((n + 1) % 256))
  done
  ip addr add "10.213.$n.1/24" dev "$bridge"
  ip link set "$bridge" up
  echo "$bridge" >"$dir/bridge"
  run_dockerd
}

run_dockerd() {
  mkdir -p "$dir/tmp"
  TMPDIR="$dir/tmp" setsid dockerd --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/engine.pid" \
    --host "unix://$dir/docker.sock" --bridge "$(cat "$dir/bridge")" --iptables=false --ip-forward=false --ip-masq=false \
    --live-restore --default-ulimit nofile=4096:4096 --default-ulimit nproc=4096:4096 >>"$dir/engine.log" 2>&1 </dev/null &
}

# wait_answer waits up to 15 s for the engine's API.
wait_answer() {
  local sock="$dir/$kind.sock"
  for _ in $(seq 1 150); do answers "$sock" && return 0; sleep 0.1; done
  cat "$dir/engine.log" >&2
  log "the $kind engine did not answer on $sock"
  exit 1
}

# stop_service stops the engine's API service and waits for it to exit.
stop_service() {
  [[ -f "$dir/engine.pid" ]] || return 0
  local pid
  pid=$(cat "$dir/engine.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/engine.pid"
}

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  install_packages
  echo "$kind" >"$dir/kind"
  "start_$kind"
  sock="$dir/$kind.sock"
  wait_answer
  import_images
  log "Docker Engine API ($kind) on unix://$sock"
  echo "DOCKER_HOST=unix://$sock"
  ;;
stop)
  [[ -d "$dir" ]] || exit 0
  dir=$(cd "$dir" && pwd)
  kind=$(cat "$dir/kind" 2>/dev/null || echo podman)
  if [[ ! -f "$dir/engine.pid" && -f "$dir/kind" ]]; then
    # Down (hack/engine.sh down): up again, to remove its containers.
    if [[ "$kind" == podman ]]; then start_podman; else run_dockerd; fi
    (wait_answer) || true
  fi
  if [[ -f "$dir/engine.pid" ]]; then
    if [[ "$kind" == podman ]]; then
      podman_in rm -af -t 0 >/dev/null 2>&1 || true
    else
      ids=$(docker -H "unix://$dir/docker.sock" ps -aq 2>/dev/null || true)
      [[ -z "$ids" ]] || docker -H "unix://$dir/docker.sock" rm -f $ids >/dev/null 2>&1 || true
    fi
    stop_service
  fi
  if [[ -f "$dir/bridge" ]]; then
    ip link delete "$(cat "$dir/bridge")" 2>/dev/null || true
    rm -f "/run/edgeplane-engines/$(cat "$dir/bridge")"
  fi
  # A container's mounts go with its removal; the engine's own may stay.
  grep -o " $dir/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$dir"
  ;;
down)
  dir=$(cd "$dir" && pwd)
  kind=$(cat "$dir/kind")
  stop_service
  ;;
up)
  dir=$(cd "$dir" && pwd)
  kind=$(cat "$dir/kind")
  if [[ "$kind" == podman ]]; then start_podman; else run_dockerd; fi
  wait_answer
  ;;
*)
  echo "usage: hack/engine.sh start DIR [podman|docker] | stop DIR | down DIR | up DIR" >&2
  exit 2
  ;;
esac
