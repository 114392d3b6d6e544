#!/usr/bin/env bash
# A private container engine serving the Docker Engine API, for the tests
# and make dev: Podman's API service on a socket in DIR, with its storage,
# state and configuration in DIR too, so it never touches the host's engine.
#
#   hack/engine.sh start DIR   installs Podman from Debian packages when
#                              absent, starts the service, imports the test
#                              images, prints DOCKER_HOST=unix://DIR/podman.sock
#   hack/engine.sh stop DIR    removes every container, stops the service,
#                              removes DIR
#
# The configuration is one a normal host accepts too: cgroupfs (no systemd
# needed), runc, events in a file, vfs storage, and default rlimits below
# the hard limits of sandboxes that refuse to raise them.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: hack/engine.sh start|stop DIR" >&2; exit 2; }
log() { echo "engine: $*" >&2; }

podman_in() {
  CONTAINERS_CONF="$dir/containers.conf" CONTAINERS_STORAGE_CONF="$dir/storage.conf" \
    CONTAINERS_REGISTRIES_CONF="$dir/registries.conf" podman "$@"
}

install_packages() {
  local missing=()
  command -v podman >/dev/null || missing+=(podman conmon netavark aardvark-dns catatonit iptables)
  command -v runc >/dev/null || missing+=(runc)
  # The image is one static binary: Debian's plain busybox is dynamic.
  dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    log "missing: ${missing[*]}; install these Debian packages (as root: apt-get install ${missing[*]}), or set EDGEPLANE_SKIP_ENGINE=1 to skip the suites that need a container engine"
    exit 1
  fi
  log "installing ${missing[*]} from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "${missing[@]}" >"$dir/apt.log" 2>&1; then
    apt-get update >>"$dir/apt.log" 2>&1
    apt-get install -y --no-install-recommends "${missing[@]}" >>"$dir/apt.log" 2>&1 || {
      cat "$dir/apt.log" >&2
      log "installing ${missing[*]} failed"
      exit 1
    }
  fi
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
  cat >"$dir/registries.conf" <<EOF
unqualified-search-registries = []
short-name-mode = "disabled"
EOF
}

# import_images makes edgeplane.local/box:1 and :2 from Debian's static
# busybox: one binary and its applets, no base image, no registry. The
# default command sleeps, and exits at once on SIGTERM (wait is
# interrupted by the trap), so stopping takes no time.
import_images() {
  local root="$dir/image" bb
  bb=/bin/busybox
  mkdir -p "$root/bin"
  cp "$bb" "$root/bin/busybox"
  for applet in $("$bb" --list); do
    [[ "$applet" == busybox ]] || ln -sf busybox "$root/bin/$applet"
  done
  tar -C "$root" -cf "$dir/box.tar" bin
  for tag in 1 2; do
    podman_in import \
      --change 'ENV PATH=/bin' \
      --change "LABEL io.edgeplane.test-image=$tag" \
      --change 'CMD ["sh", "-c", "trap \"exit 0\" TERM; sleep 2147483647 & wait"]' \
      "$dir/box.tar" "edgeplane.local/box:$tag" >/dev/null 2>&1
  done
}

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  install_packages
  write_config
  # setsid: the service outlives this script, and its pid is podman's own.
  setsid bash -c 'echo $$ >"$0/service.pid"; CONTAINERS_CONF="$0/containers.conf" CONTAINERS_STORAGE_CONF="$0/storage.conf" CONTAINERS_REGISTRIES_CONF="$0/registries.conf" exec podman system service --time=0 "unix://$0/podman.sock"' "$dir" >"$dir/service.log" 2>&1 </dev/null &
  for _ in $(seq 1 100); do
    [[ -S "$dir/podman.sock" ]] && podman_in --url "unix://$dir/podman.sock" version >/dev/null 2>&1 && break
    sleep 0.1
  done
  podman_in --url "unix://$dir/podman.sock" version >/dev/null 2>&1 || {
    cat "$dir/service.log" >&2
    log "podman system service did not answer on $dir/podman.sock"
    exit 1
  }
  import_images
  log "Docker Engine API (Podman $(podman --version | awk '{print $3}')) on unix://$dir/podman.sock"
  echo "DOCKER_HOST=unix://$dir/podman.sock"
  ;;
stop)
  [[ -d "$dir" ]] || exit 0
  dir=$(cd "$dir" && pwd)
  if [[ -f "$dir/service.pid" ]]; then
    podman_in rm -af -t 0 >/dev/null 2>&1 || true
    kill "$(cat "$dir/service.pid")" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$(cat "$dir/service.pid")" 2>/dev/null || break; sleep 0.1; done
  fi
  # Containers' network namespaces and mounts go with their removal above.
  rm -rf "$dir"
  ;;
*)
  echo "usage: hack/engine.sh start|stop DIR" >&2
  exit 2
  ;;
esac
