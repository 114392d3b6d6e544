/*
Copyright 2026 The edgeplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sandbox is this machine as the reader's: the operator's workstation and
// the device at once. The blocks run as written, as root, in a mount
// namespace of their own where /etc, /usr/local and /var/lib are
// overlays whose writes land in the test's directory (install into
// /usr/local/bin, a unit into /etc/systemd/system, the device's identity
// into /var/lib/edge-agent), and in a PID namespace of their own, so that
// every process they leave (the agent systemctl starts) ends with it.
type sandbox struct {
	dir    string
	holder *exec.Cmd
	// init is the host pid of the namespaces' first process.
	init int
	// env is the environment of every block.
	env []string
}

// overlaid are the directories whose writes the sandbox keeps.
var overlaid = []string{"/etc", "/usr/local", "/var/lib"}

// startSandbox starts the namespaces. files are written into the
// overlays first, by their path as the blocks see it (a registry's CA in
// /etc/containers/certs.d, the device's /etc/edgeplane/edge-agent.env).
// tools is put first on PATH.
func startSandbox(t *testing.T, dir, tools string, env []string, files map[string]string) *sandbox {
	t.Helper()
	s := &sandbox{dir: dir}
	var mounts strings.Builder
	for _, d := range overlaid {
		ovl := filepath.Join(dir, "overlay", strings.ReplaceAll(strings.Trim(d, "/"), "/", "-"))
		for _, sub := range []string{"upper", "work"} {
			if err := os.MkdirAll(filepath.Join(ovl, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&mounts, "mount -t overlay overlay -o lowerdir=%s,upperdir=%s/upper,workdir=%s/work %s\n", d, ovl, ovl, d)
		for path, content := range files {
			rel, err := filepath.Rel(d, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			f := filepath.Join(ovl, "upper", rel)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	units := filepath.Join(dir, "units")
	if err := os.MkdirAll(units, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "systemctl"), []byte(systemctlShim), 0o755); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "ready")
	// The first process reaps what the blocks leave (bash reaps any child
	// it is given) and holds the namespaces until the test ends.
	script := "set -e\n" + mounts.String() + "touch " + ready + "\ntrap 'exit 0' TERM\nwhile :; do sleep 1000 & wait $! || true; done\n"
	s.holder = exec.Command("unshare", "--mount", "--propagation", "private", "--pid", "--kill-child", "--mount-proc", "bash", "-c", script)
	log, err := os.Create(filepath.Join(dir, "sandbox.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.holder.Stdout, s.holder.Stderr = log, log
	// unshare dies with the test, and its child, the namespaces' first
	// process, with unshare (--kill-child), and every process in them with it.
	s.holder.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := s.holder.Start(); err != nil {
		t.Fatalf("the sandbox needs unshare (util-linux) and root: %v", err)
	}
	t.Cleanup(func() {
		_ = s.holder.Process.Kill()
		_ = s.holder.Wait()
		_ = log.Close()
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "sandbox.log"))
			t.Fatalf("the sandbox did not start within a minute:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", s.holder.Process.Pid, s.holder.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if s.init, err = strconv.Atoi(strings.TrimSpace(string(children))); err != nil {
		t.Fatalf("the sandbox's first process: %q: %v", children, err)
	}
	s.env = append(env, "PATH="+tools+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMCTL_SHIM_STATE="+units)
	return s
}

// command is a command run inside the sandbox, in dir, with env added to
// the sandbox's, in a process group of its own that is killed when ctx
// ends.
func (s *sandbox) command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	// Entering a mount namespace resets the working directory to its
	// root: --wd sets it again.
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--target", strconv.Itoa(s.init), "--mount", "--pid", "--wd=" + dir, "--"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(slices.Clone(s.env), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A process a block left in the background with the block's output
	// (none should) does not hold the test.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// unitLog is the output of a unit systemctl started.
func (s *sandbox) unitLog(unit string) string {
	out, err := os.ReadFile(filepath.Join(s.dir, "units", unit+".log"))
	if errors.Is(err, os.ErrNotExist) {
		return "(never started)"
	}
	return string(out)
}

// systemctlShim is systemctl where no systemd runs: it starts a unit of
// /etc/systemd/system as systemd would in its essentials (its
// EnvironmentFile, its ExecStart with $VAR split at whitespace, its
// StateDirectory) as a background process of the sandbox with its output
// in $SYSTEMCTL_SHIM_STATE/UNIT.log, and stops it with SIGTERM
// (KillMode=process: the main process only). Restart= is not played.
const systemctlShim = `#!/usr/bin/env bash
# systemctl for the install suite's sandbox (test/e2e/install): no systemd runs here.
set -euo pipefail
state=${SYSTEMCTL_SHIM_STATE:?}
unit_file() {
  local f=/etc/systemd/system/${1%.service}.service
  [[ -f $f ]] || { echo "Unit ${1%.service}.service not found." >&2; exit 5; }
  echo "$f"
}
key() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
active() { [[ -f $state/$1.pid ]] && kill -0 "$(cat "$state/$1.pid")" 2>/dev/null; }
start() {
  local f name envfile exec_start state_dir
  f=$(unit_file "$1") name=$(basename "$f" .service)
  active "$name" && return 0
  envfile=$(key "$f" EnvironmentFile) exec_start=$(key "$f" ExecStart) state_dir=$(key "$f" StateDirectory)
  [[ -n $exec_start ]] || { echo "$f has no ExecStart" >&2; exit 1; }
  [[ -z $state_dir ]] || install -d -m "$(key "$f" StateDirectoryMode | grep . || echo 0755)" "/var/lib/$state_dir"
  (
    if [[ -n $envfile ]]; then
      optional=${envfile%%[!-]*} envfile=${envfile#-}
      if [[ -f $envfile ]]; then set -a; . "$envfile"; set +a
      elif [[ -z $optional ]]; then echo "$envfile: no such EnvironmentFile" >&2; exit 1; fi
    fi
    set +u
    eval "set -- $exec_start"
    echo "systemctl: starting $name: $*" >>"$state/$name.log"
    setsid "$@" </dev/null >>"$state/$name.log" 2>&1 &
    echo $! >"$state/$name.pid"
  )
}
stop() {
  local name=${1%.service}
  active "$name" || return 0
  local pid; pid=$(cat "$state/$name.pid")
  kill -TERM "$pid"
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$state/$name.pid"
}
cmd=${1:-}; shift || true
now=false units=()
for a in "$@"; do
  case $a in --now) now=true ;; -*) ;; *) units+=("$a") ;; esac
done
case $cmd in
  daemon-reload) ;;
  enable|disable)
    for u in "${units[@]}"; do
      f=$(unit_file "$u") wants=$(key "$f" WantedBy)
      link=/etc/systemd/system/${wants:-multi-user.target}.wants/$(basename "$f")
      if [[ $cmd == enable ]]; then
        mkdir -p "$(dirname "$link")" && ln -sf "$f" "$link" && echo "Created symlink $link → $f."
        ! $now || start "$u"
      else
        rm -f "$link"; ! $now || stop "$u"
      fi
    done ;;
  start) for u in "${units[@]}"; do start "$u"; done ;;
  stop) for u in "${units[@]}"; do stop "$u"; done ;;
  restart) for u in "${units[@]}"; do stop "$u"; start "$u"; done ;;
  is-active)
    for u in "${units[@]}"; do if active "${u%.service}"; then echo active; else echo inactive; exit 3; fi; done ;;
  status)
    for u in "${units[@]}"; do
      if active "${u%.service}"; then echo "● ${u%.service}.service: active (running), pid $(cat "$state/${u%.service}.pid")"
      else echo "● ${u%.service}.service: inactive (dead)"; exit 3; fi
      tail -n 10 "$state/${u%.service}.log" 2>/dev/null || true
    done ;;
  *) echo "systemctl (install suite): $cmd is not played here" >&2; exit 1 ;;
esac
`
