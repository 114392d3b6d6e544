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

package edgechaos_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/edgechaos"
)

// TestEdgeChaos is the short edge chaos run of make test: on Podman, 40 s
// of changes rolled out in waves, two of them to an image that fails, with
// the real agent's link cut twice, its engine restarted once and the agent
// killed three times. Nothing may be duplicated, orphaned or lost, and the
// failing rollouts are rolled back.
func TestEdgeChaos(t *testing.T) {
	if testenv.EngineSkipped() {
		fmt.Printf("edge chaos skipped: %s=1\n", testenv.SkipEngineVar)
		t.Skip(testenv.SkipEngineVar + "=1: the edge chaos run needs a real container engine")
	}
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager", "./cmd/edge-agent")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := edgechaos.Run(ctx, edgechaos.Config{
		Bin: bin, Engine: "podman", SimNodes: 6, SimServices: 4, RealServices: 3, Rate: 2, Duration: 40 * time.Second,
		Cuts: 2, EngineRestarts: 1, Kills: 3, Stalls: 2, HubKills: 2, BadImages: 2, SimPullTime: time.Second, Timeout: 2 * time.Minute, Seed: uint64(time.Now().UnixNano()), Log: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Line())
	if res.Cuts != 2 || res.EngineRestarts != 1 || res.AgentKills != 3 || res.Stalls != 2 || res.HubKills != 2 {
		t.Errorf("faults injected: %s; want 2 cuts, 1 engine restart, 3 kills, 2 registry stalls, 2 hub replica kills", res.Line())
	}
	if res.BadImages != 2 || res.Rollbacks < 1 {
		t.Errorf("failing rollouts: %s; want 2 changes to a failing image, rolled back at least once", res.Line())
	}
	if res.Failed() {
		t.Errorf("the edge lost or duplicated something under faults: %s", res.Line())
	}
}
