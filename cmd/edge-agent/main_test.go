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

	"github.com/edgeplane/edgeplane/cmd/edge-agent/flags"
	"github.com/edgeplane/edgeplane/internal/agent/app"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
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
	if !strings.Contains(string(unit), "\nStateDirectory="+filepath.Base(flags.DefaultStateDir)+"\n") {
		t.Fatalf("the unit has no StateDirectory=%s for --state-dir's default %s", filepath.Base(flags.DefaultStateDir), flags.DefaultStateDir)
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

// TestAdvertiseAddress: the node played reports the address given, else
// none (its connection gives it one); a bad address, two different ones or
// one for many nodes are refused before anything runs.
func TestAdvertiseAddress(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--runtime=sim", "--node-name=edge-01", "--advertise-address=nowhere"}, `--advertise-address "nowhere": must be host:port`},
		{[]string{"--runtime=sim", "--node-name=edge-01", "--address=10.0.0.7"}, `--advertise-address "10.0.0.7": must be host:port`},
		{[]string{"--runtime=sim", "--node-name=edge-01", "--address=10.0.0.7:7200", "--advertise-address=10.0.0.8:7200"}, "give one"},
		{[]string{"--runtime=sim", "--nodes=3", "--advertise-address=10.0.0.7:7200"}, "--advertise-address is the address of one node"},
	} {
		err := run(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("edge-agent %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if got := app.Nodes("edge-01", "", "edge", 1, []string{"linux"}, []string{"arm64"}, nil); len(got) != 1 || got[0].Address != "" {
		t.Errorf("one node given no address: %+v, want it to report the one its connection gives it", got)
	}
	if got := app.Nodes("edge-01", "[fd00::7]:8080", "edge", 1, []string{"linux"}, []string{"arm64"}, nil); got[0].Address != "[fd00::7]:8080" {
		t.Errorf("one node given [fd00::7]:8080 reports %q", got[0].Address)
	}
	got := app.Nodes("", "", "edge", 2, []string{"linux", "sylixos"}, []string{"amd64"}, nil)
	if got[0].Address != "10.77.0.1:7200" || got[1].Address != "10.77.0.2:7200" {
		t.Errorf("simulated nodes report %q and %q, want 10.77.0.1:7200 and 10.77.0.2:7200", got[0].Address, got[1].Address)
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

// edge-agent join checks its flags before it sends the token, which joins
// once, and writes nothing when they are wrong.
func TestJoinFlags(t *testing.T) {
	const (
		hub   = "--hub=https://127.0.0.1:1"
		token = "--token=abcdef.0123456789abcdef"
		hash  = "--ca-cert-hash=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	)
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"join", hub, "--token=abcdef", hash}, "--token: a join token is"},
		{[]string{"join", hub, "--token=ABCDEF.0123456789ABCDEF", hash}, "--token: a join token is"},
		{[]string{"join", hub, token, "--ca-cert-hash=0123"}, "--ca-cert-hash"},
		{[]string{"join", hub, token, "--ca-cert-hash=sha256:0123"}, "--ca-cert-hash"},
		{[]string{"join", "--hub=http://127.0.0.1:1", token, hash}, "--hub"},
		{[]string{"join", "--hub=127.0.0.1:1", token, hash}, "--hub"},
		{[]string{"join", "--hub=https://127.0.0.1:1/hub", token, hash}, "--hub"},
		{[]string{"join", hub, hash}, "needs --hub, --token and --ca-cert-hash"},
		{[]string{"join", hub, token, hash, "--kubeconfig=/etc/edgeplane/kubeconfig"}, "--kubeconfig"},
		{[]string{"join", hub, token, hash, "--runtime=sim", "--nodes=3"}, "a hub identity is one node's"},
		{[]string{"join", hub, token, hash, "--lease-namespace=x"}, "--lease-namespace"},
		{[]string{"join", hub, token, hash, "--max-instances=0"}, "--max-instances"},
		{[]string{"join", hub, token, hash, "extra"}, "unexpected argument"},
		{[]string{"--runtime=sim", "join", hub, token, hash}, "join is a subcommand"},
	} {
		dir := t.TempDir()
		err := run(context.Background(), append(tc.args, "--state-dir="+dir))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("edge-agent %v: %v, want %q", tc.args, err, tc.wantErr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("edge-agent %v wrote %d files in the state dir", tc.args, len(entries))
		}
	}
}

// writeIdentity writes the identity of a device that joined the hub at
// server as node, as edge-agent join saves it.
func writeIdentity(t *testing.T, dir, server, node string) {
	t.Helper()
	ca, err := testenv.NewCA("hub-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(testenv.Leaf{CommonName: node, Organization: hubapi.NodeCertOrganization, Client: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"ca.crt":        ca.PEM,
		"node.crt":      certPEM,
		"node.key":      keyPEM,
		"identity.json": []byte(`{"server": "` + server + `", "node": "` + node + `", "leaseNamespace": "hub-leases"}`),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A device that joined the hub runs through it when no kubeconfig is
// named, as the node it joined as.
func TestHubMode(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	dir := t.TempDir()
	// Nothing listens on port 1 of loopback: the hub cannot be reached.
	writeIdentity(t, filepath.Join(dir, "hub"), "https://127.0.0.1:1", "edge-07")
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--runtime=sim", "--nodes=3"}, "a hub identity is one node's"},
		{[]string{"--runtime=sim", "--node-name=edge-01"}, "joined the hub as node edge-07"},
		{[]string{"--runtime=sim", "--lease-namespace=other"}, "the hub keeps node edge-07's Lease in hub-leases"},
	} {
		if err := run(context.Background(), append(tc.args, "--state-dir="+dir)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("edge-agent %v: %v, want %q", tc.args, err, tc.wantErr)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := run(ctx, []string{"--runtime=sim", "--node-name=edge-07", "--state-dir=" + dir}); err != nil {
		t.Fatalf("the agent exited: %v", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the agent returned before it was stopped")
	}
}
