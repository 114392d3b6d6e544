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

package chaos_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/chaos"
)

// TestFailover is the short chaos run of make test: two managers, the
// leader killed twice during a storm of spec changes. Every version the
// watch delivered must be recorded once, under contiguous revisions.
func TestFailover(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager", "./cmd/edge-agent")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, out)
	}
	// No deadline of its own: the run ends with go test's -timeout, a
	// minute early, so that it stops its processes and says what it
	// waited for rather than panicking.
	ctx, cancel := testenv.Context(t)
	defer cancel()
	// The lease is kube-controller-manager's default: a leader that a
	// busy machine slows for a few seconds keeps it, and only the kills
	// end leaders. Each kill costs a lease duration before the standby
	// leads.
	res, err := chaos.Run(ctx, chaos.Config{
		Bin: bin, Services: 10, Factor: 2, Nodes: 6, Changes: 200, Rate: 20,
		KillEvery: 4 * time.Second, MinKills: 2, LeaseDuration: 15 * time.Second, Timeout: 10 * time.Minute, Log: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Line())
	if res.Kills < 2 {
		t.Errorf("the leader was killed %d times, want at least 2", res.Kills)
	}
	if res.Duplicates != 0 || res.Missing != 0 || res.Gaps != 0 {
		t.Errorf("the deployment log is wrong after failovers: %s", res.Line())
	}
}
