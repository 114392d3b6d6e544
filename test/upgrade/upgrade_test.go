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

package upgrade_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/upgrade"
)

// TestUpgrade is the upgrade run of make test: the previous release's
// control plane, three simulated nodes, two more that keep the previous
// agent and a real node on Podman, upgraded to this tree while a rollout
// moves one node at a time. Nothing may be lost, duplicated, restarted
// or declared offline, the facade must answer every request, the rollout
// must be under way at every step and finish, and the nodes left on the
// previous agent must serve the rollout to the end.
func TestUpgrade(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	prev, from, to, err := upgrade.Versions(testenv.RepoRoot(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	engine := "podman"
	if testenv.EngineSkipped() {
		fmt.Printf("upgrade without a real node: %s=1\n", testenv.SkipEngineVar)
		engine = ""
	}
	// No deadline of its own: the run ends with go test's -timeout.
	ctx, cancel := testenv.Context(t)
	defer cancel()
	// The rollout outlasts the seven steps: each simulated node pulls
	// the new image for 20 s, and the waves wait on the pulls.
	res, err := upgrade.Run(ctx, upgrade.Config{From: from, To: to, Engine: engine, SimNodes: 3, LagNodes: 2,
		SimPullTime: 20 * time.Second, Timeout: 5 * time.Minute, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Line())
	if res.Failed() {
		t.Errorf("the upgrade from %s lost, duplicated, restarted or offlined something, the facade failed, or the rollout was not under way throughout: %s", prev.Version, res.Line())
	}
	if res.SkewNodes != 2 {
		t.Errorf("%d nodes on %s's agent served the rollout to the end, want 2", res.SkewNodes, prev.Version)
	}
}
