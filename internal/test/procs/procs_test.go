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

package procs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStop stops a process that exits on the interrupt, and kills one that
// ignores it, as a process started from a background shell does.
func TestStop(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = 200 * time.Millisecond
	for _, tc := range []struct {
		name, script string
		want         os.Signal
	}{
		{"exits on the interrupt", "touch ready; exec sleep 60", os.Interrupt},
		{"ignores the interrupt", "trap '' INT; touch ready; exec sleep 60", os.Kill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c, err := Start(context.Background(), dir, "sleeper", "sh", "-c", "cd "+dir+" && "+tc.script)
			if err != nil {
				t.Fatal(err)
			}
			// The interrupt must find the trap set.
			for deadline := time.Now().Add(30 * time.Second); ; {
				if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the shell did not set its trap within 30 s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			Stop(c)
			ws, ok := c.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != tc.want {
				t.Fatalf("process ended with %v, want killed by %v", c.ProcessState, tc.want)
			}
		})
	}
}

// TestPause returns only once the process is stopped, and Resume lets it
// run again.
func TestPause(t *testing.T) {
	c, err := Start(context.Background(), t.TempDir(), "sleeper", "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Pause(ctx, c.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if f, _ := statFields(statFile(c.Process.Pid)); len(f) == 0 || f[0] != "T" {
		t.Fatalf("state after Pause: %v, want T", f)
	}
	if err := Resume(c.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := WaitFor(ctx, "the process to run", 2*time.Millisecond, func() (bool, error) {
		stopped, err := allStopped(c.Process.Pid)
		return !stopped, err
	}); err != nil {
		t.Fatal(err)
	}
}

func TestMachineCPU(t *testing.T) {
	before, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	// Spin a little so that the machine is busy for some ticks at least.
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := MachineCPU()
	if err != nil || before <= 0 || after < before {
		t.Errorf("machine CPU %v then %v, %v", before, after, err)
	}
}
