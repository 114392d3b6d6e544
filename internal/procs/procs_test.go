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
			for {
				if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
					break
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
