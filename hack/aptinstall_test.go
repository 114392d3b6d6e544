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

package hack

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// fakeApt is a PATH holding apt-get and dpkg-query stand-ins over a
// package database in a directory: apt-get install takes a second, writes
// "begin"/"end" lines to its log and marks the packages installed; with
// APT_FAIL set it fails as apt does. hack/apt-install.sh runs as root
// here only if the test does: the check is skipped otherwise.
func fakeApt(t *testing.T) (path, db string) {
	t.Helper()
	bin, db := t.TempDir(), t.TempDir()
	write := func(name, script string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/usr/bin/env bash\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("dpkg-query", `pkg=${@: -1}; [[ -f "`+db+`/$pkg" ]] && printf 'install ok installed' || exit 1`+"\n")
	write("apt-get", `
cmd=; pkgs=()
while [[ $# -gt 0 ]]; do
  case "$1" in -o) shift 2 ;; -*) shift ;; install|update) cmd=$1; shift ;; *) pkgs+=("$1"); shift ;; esac
done
[[ "$cmd" == install ]] || exit 0
if [[ -n "${APT_FAIL:-}" ]]; then echo "E: Unable to locate package ${pkgs[*]}"; exit 100; fi
echo "begin ${pkgs[*]}" >>"`+db+`/log"
sleep 1
for p in "${pkgs[@]}"; do touch "`+db+`/$p"; done
echo "end ${pkgs[*]}" >>"`+db+`/log"
`)
	return bin + string(os.PathListSeparator) + os.Getenv("PATH"), db
}

func aptInstall(t *testing.T, path, cache string, env []string, args ...string) (string, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join(testenv.RepoRoot(), "hack", "apt-install.sh")}, args...)...)
	cmd.Env = append(append(os.Environ(), "PATH="+path, "EDGEPLANE_CACHE="+cache), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestAptInstallSerialized: suites that install the same packages at the
// same moment install them once; the others wait and install nothing.
func TestAptInstallSerialized(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hack/apt-install.sh installs only as root")
	}
	path, db := fakeApt(t)
	cache := t.TempDir()
	var wg sync.WaitGroup
	outs, errs := make([]string, 4), make([]error, 4)
	for i := range 4 {
		wg.Go(func() { outs[i], errs[i] = aptInstall(t, path, cache, nil, "pkg-a", "pkg-b", "present=sh") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("install %d: %v\n%s", i, err, outs[i])
		}
	}
	log, err := os.ReadFile(filepath.Join(db, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(log), "begin pkg-a pkg-b\nend pkg-a pkg-b\n"; got != want {
		t.Errorf("apt-get ran as\n%s\nwant once, for the missing packages only (a command on PATH counts as present):\n%s", got, want)
	}
	waited := 0
	for _, o := range outs {
		if strings.Contains(o, "another install runs; waiting for it") {
			waited++
		}
	}
	if waited == 0 {
		t.Errorf("no caller said it waited for the one that installed:\n%s", strings.Join(outs, "\n"))
	}
}

// TestAptInstallFailure: a failed install says so with apt's own log.
func TestAptInstallFailure(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hack/apt-install.sh installs only as root")
	}
	path, _ := fakeApt(t)
	out, err := aptInstall(t, path, t.TempDir(), []string{"APT_FAIL=1"}, "pkg-missing")
	if err == nil {
		t.Fatalf("a failed install exited 0:\n%s", out)
	}
	for _, want := range []string{"E: Unable to locate package pkg-missing", "installing pkg-missing failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
