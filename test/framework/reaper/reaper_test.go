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

package reaper

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunReapsWhatATestLeft runs a "test" that starts a server detached
// with setsid (as hack/engine.sh starts an engine) and exits: the binary
// passed, yet the run fails, names the server and leaves nothing behind.
func TestRunReapsWhatATestLeft(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "server.pid")
	script := "setsid sh -c 'echo $$ >" + pidfile + "; exec sleep 300' </dev/null >/dev/null 2>&1 &" +
		" while [ ! -s " + pidfile + " ]; do sleep 0.05; done"
	var out strings.Builder
	code := runChild(t, []string{"sh", "-c", script}, &out)
	if code != 1 {
		t.Fatalf("exit code %d, want 1: a test that left a process running fails\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "sleep 300") {
		t.Errorf("the report does not name the process left running:\n%s", out.String())
	}
	pid := readPID(t, pidfile)
	if _, state, ok := stat(pid); ok && state != "Z" && state != "X" {
		t.Errorf("process %d still runs (state %s) after the reaper returned", pid, state)
	}
}

// TestRunKeepsTheBinarysVerdict: a failing test stays failed, a passing
// one that leaves nothing passes, with nothing reported.
func TestRunKeepsTheBinarysVerdict(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"sleep 0.1 & wait", 0},
	} {
		var out strings.Builder
		if code := runChild(t, []string{"sh", "-c", tc.script}, &out); code != tc.want || out.Len() > 0 {
			t.Errorf("%q: exit code %d, output %q; want %d and no output", tc.script, code, out.String(), tc.want)
		}
	}
}

// TestRunPassesTheInterrupt: the binary runs out of the terminal's
// process group, so a Ctrl-C reaches it through Run, and it gets to run
// its cleanup.
func TestRunPassesTheInterrupt(t *testing.T) {
	dir := t.TempDir()
	ready, cleaned := filepath.Join(dir, "ready"), filepath.Join(dir, "cleaned")
	script := "trap 'touch " + cleaned + "; exit 0' INT; touch " + ready + "; while :; do sleep 0.05; done"
	cmd := exec.Command(os.Args[0], "sh", "-c", script)
	cmd.Env = append(os.Environ(), "REAPER_CHILD=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the script did not set its trap within a minute")
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("Run after the interrupt: %v, want the binary's exit 0", err)
	}
	if _, err := os.Stat(cleaned); err != nil {
		t.Errorf("the binary did not run its interrupt handler: %v", err)
	}
}

// runChild runs Run in a child process of the test binary: Run makes its
// process a subreaper, which the test binary itself must not become.
func runChild(t *testing.T, argv []string, out *strings.Builder) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), "REAPER_CHILD=1")
	cmd.Stderr = out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestMain is Run itself in the child process runChild starts.
func TestMain(m *testing.M) {
	if os.Getenv("REAPER_CHILD") == "1" {
		os.Exit(Run(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		data, _ := os.ReadFile(file)
		var pid int
		for _, c := range strings.TrimSpace(string(data)) {
			pid = pid*10 + int(c-'0')
		}
		if pid > 0 {
			return pid
		}
	}
	t.Fatalf("%s never held a pid", file)
	return 0
}
