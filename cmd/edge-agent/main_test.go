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

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shipped systemd unit starts the agent with flags it knows.
func TestSystemdUnitFlags(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join("..", "..", "config", "agent", "edge-agent.service"))
	if err != nil {
		t.Fatal(err)
	}
	var exec string
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			exec = v
		}
	}
	fields := strings.Fields(strings.NewReplacer("%H", "edge-01", "$EDGE_AGENT_ARGS", "--runtime-endpoint=unix:///run/podman/podman.sock").Replace(exec))
	if len(fields) < 2 || fields[0] != "/usr/local/bin/edge-agent" {
		t.Fatalf("ExecStart = %q", exec)
	}
	// --version stops the agent once every flag before it has parsed.
	if err := run(context.Background(), append(fields[1:], "--version")); err != nil {
		t.Fatalf("the unit's flags: %v", err)
	}
	// The unit gives the agent the directory its state file defaults to.
	if !strings.Contains(string(unit), "\nStateDirectory="+filepath.Base(defaultStateDir)+"\n") {
		t.Fatalf("the unit has no StateDirectory=%s for --state-dir's default %s", filepath.Base(defaultStateDir), defaultStateDir)
	}
}

// An agent started while the API server cannot be reached runs on (it
// used to exit at once, failing discovery), until it is stopped.
func TestStartsWithoutAPIServer(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	// Nothing listens on port 1 of loopback: every call is refused.
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	err := run(ctx, []string{"--runtime=sim", "--kubeconfig=" + kubeconfig, "--node-name=edge-01", "--state-dir=" + dir})
	if err != nil {
		t.Fatalf("the agent exited after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if ctx.Err() == nil {
		t.Fatalf("the agent returned after %s, before it was stopped", time.Since(start).Round(time.Millisecond))
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--runtime=cri"},
		{"--no-such-flag"},
		{"--runtime=sim", "--silence=edge-01:soon"},
		{"--runtime=sim", "--stall-pulls=("},
		{"--labels=novalue"},
		{"--runtime=sim", "--max-instances=0"},
		{"--runtime=sim", "--max-instances=2001"},
	} {
		if err := run(context.Background(), args); err == nil {
			t.Errorf("edge-agent %v: no error", args)
		}
	}
}

// TestRealRuntimeByDefault: started without --runtime, the agent drives a
// real engine; the simulator's flags say so rather than simulate.
func TestRealRuntimeByDefault(t *testing.T) {
	for _, f := range []string{"--nodes=3", "--fail-images=^x", "--stall-pulls=^big", "--silence=edge-01:1s:1s"} {
		err := run(context.Background(), []string{f})
		if err == nil || !strings.Contains(err.Error(), "is a setting of the simulator (--runtime=sim), not of --runtime=docker") {
			t.Errorf("edge-agent %s: %v, want the simulator's flag refused", f, err)
		}
	}
}
