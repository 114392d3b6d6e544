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

package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// lines collects what an outage logs.
type lines []string

func (l *lines) log(msg string, _ ...any) { *l = append(*l, msg) }

// One line when it goes down, one a minute at most while it stays down,
// one when it comes back: never one per attempt.
func TestOutageLogs(t *testing.T) {
	var got lines
	o := outage{what: "Engine", log: got.log}
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	boom := errors.New("connection refused")
	if !o.fail(t0, boom) {
		t.Fatal("the first failure did not take it down")
	}
	// An attempt every 200 ms for 150 s: 750 attempts.
	for at := 200 * time.Millisecond; at <= 150*time.Second; at += 200 * time.Millisecond {
		if o.fail(t0.Add(at), boom) {
			t.Fatal("a later failure took it down again")
		}
	}
	if !o.ok(t0.Add(151 * time.Second)) {
		t.Fatal("a success did not bring it back")
	}
	if o.ok(t0.Add(152 * time.Second)) {
		t.Fatal("a second success brought it back again")
	}
	want := []string{"Engine went down", "Engine still down", "Engine still down", "Engine came back"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("logged %q; want %q", got, want)
	}
}

// The link's retries back off with jitter and stay within their bounds.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		failures int
		lo, hi   time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{4, 4 * time.Second, 8 * time.Second},
		{5, 5 * time.Second, 10 * time.Second},
		{50, 5 * time.Second, 10 * time.Second},
	} {
		seen := map[time.Duration]bool{}
		for range 200 {
			b := retryBackoff(linkRetryBase, 10*time.Second)
			var d time.Duration
			for range tc.failures {
				d = b.Step()
			}
			if d < tc.lo || d > tc.hi {
				t.Fatalf("after %d failures: %s, want within [%s, %s]", tc.failures, d, tc.lo, tc.hi)
			}
			seen[d] = true
		}
		// Jitter: a fleet that failed together does not retry together.
		if len(seen) < 100 {
			t.Fatalf("after %d failures: only %d distinct waits in 200 draws", tc.failures, len(seen))
		}
	}
}

// While a writer's calls fail it makes none before its back-off ends; an
// answer that refuses a call still proves the link.
func TestLink(t *testing.T) {
	var got lines
	l := newLink(10*time.Second, got.log)
	w := l.writer()
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	if !w.ready(t0) {
		t.Fatal("a new link is not ready")
	}
	w.result(t0, errors.New("connection refused"))
	if w.ready(t0.Add(400*time.Millisecond)) || !w.ready(t0.Add(time.Second)) {
		t.Fatalf("after one failure: retry at %s, want within [0.5 s, 1 s]", w.retryAt.Sub(t0))
	}
	if w.result(t0.Add(time.Second), apierrors.NewForbidden(schema.GroupResource{Resource: "leases"}, "x", errors.New("no"))) != true {
		t.Fatal("a refusal from the API server did not bring the link back")
	}
	if !w.ready(t0.Add(time.Second)) {
		t.Fatal("the link is not ready once back")
	}
}

// Reports the API server cannot take (the hub forwards them there) back
// off on their own: the renewals the hub answers go on at their interval,
// and once one proves the link the reports are tried again at once.
func TestFailingReportsHoldUpNoRenewal(t *testing.T) {
	var got lines
	l := newLink(10*time.Second, got.log)
	beats, reports := l.writer(), l.writer()
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	busy := apierrors.NewTooManyRequests("the API server is too busy", 1)
	now := t0
	for range 6 { // back-offs of 0.5 s to 8 s, together past a renew interval
		reports.result(now, busy)
		now = now.Add(reports.until(now))
	}
	for at := t0; at.Before(now); at = at.Add(10 * time.Second) {
		if !beats.ready(at) || beats.until(at) != 0 {
			t.Fatalf("a renewal due %s after the reports began to fail waits %s for their back-off", at.Sub(t0), beats.until(at))
		}
		beats.result(at, nil)
		if !reports.ready(at) {
			t.Fatalf("the renewal %s in proved the link, and the reports still wait %s", at.Sub(t0), reports.until(at))
		}
		reports.result(at, busy)
	}
	if !strings.HasPrefix(strings.Join(got, "|"), "API server link went down|API server link came back|API server link went down") {
		t.Fatalf("logged %q", got)
	}
}

// A cut shorter than the grace period never outlasts it: once the link
// is back, the next try comes within one renew interval, so a node that
// beat up to 10 s before a 15 s cut beats again within 35 s, inside the
// 40 s grace, whatever the jitter drew.
func TestLinkRetriesWithinABeatOfTheCutsEnd(t *testing.T) {
	const renew, cut, grace = 10 * time.Second, 15 * time.Second, 40 * time.Second
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for draw := range 500 {
		w := newLink(renew, func(string, ...any) {}).writer()
		now := t0
		for now.Before(t0.Add(cut)) {
			w.result(now, errors.New("connection refused"))
			now = w.retryAt
		}
		if wait := now.Sub(t0.Add(cut)); wait > renew {
			t.Fatalf("draw %d: first try %s after the cut ended, want at most %s", draw, wait, renew)
		}
		if back := now.Sub(t0) + renew; back >= grace {
			t.Fatalf("draw %d: a node that beat %s before the cut beats again %s after it, past the %s grace", draw, renew, back, grace)
		}
	}
}

func testWants() map[string]want {
	svc := &assigned{Namespace: "default", Name: "web", Version: "7", AssignedService: edgev1alpha1.AssignedService{UID: "u1", Revision: 3}}
	svc.Spec.Image.Ref = "web@1.0#linux"
	svc.Spec.Cmd = []string{"/bin/web"}
	return map[string]want{
		"t1": {svc: svc, inst: edgev1alpha1.AssignedInstance{TaskID: "t1", Name: "web-t1", Revision: 3}},
		"t2": {svc: svc, inst: edgev1alpha1.AssignedInstance{TaskID: "t2", Name: "web-t2", Revision: 3}},
	}
}

// A state file of version 1, as v0.1.0's agent wrote it (services
// with the node's instances in their status), is read as the entries it
// was made from: a device upgraded while cut off starts from it.
func TestStateFileVersion1(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	svc := edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1", ResourceVersion: "7"}}
	svc.Spec.Image.Ref = "web@1.0#linux"
	svc.Spec.Cmd = []string{"/bin/web"}
	svc.Status.Containers = []edgev1alpha1.ServiceInstance{
		{TaskID: "t1", Name: "web-t1", NodeName: "edge-01", Revision: 3, DeployNum: 2},
		{TaskID: "t2", Name: "web-t2", NodeName: "edge-01", Revision: 3},
	}
	raw, err := json.Marshal([]edgev1alpha1.EdgeService{svc})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(stateDoc{Kind: stateKind, Version: 1, Node: "edge-01", Written: now, Checksum: checksum(raw), Services: raw})
	if err != nil {
		t.Fatal(err)
	}
	f := newStateFile(dir, "edge-01")
	if err := os.WriteFile(f.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	services, err := f.load(now)
	if err != nil {
		t.Fatal(err)
	}
	back := wantsOf(services)
	if len(back) != 2 || back["t1"].inst.Revision != 3 || back["t1"].inst.DeployNum != 2 || back["t1"].inst.Name != "web-t1" ||
		back["t2"].svc.Spec.Cmd[0] != "/bin/web" || back["t1"].svc.UID != "u1" || back["t1"].svc.Namespace != "default" || back["t1"].svc.Name != "web" {
		t.Fatalf("loaded %+v", back)
	}
	// The same wants as the version 2 file holds: unchanged, not rewritten.
	loaded, saved := back["t1"], testWants()["t1"]
	if got, want := loaded.key(), saved.key(); got != want {
		t.Fatalf("a version 1 entry's key %q, want %q as version 2 keeps it", got, want)
	}
	if err := f.save(testWants(), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(f.path); string(after) != string(data) {
		t.Fatal("the same desired state was written again over a version 1 file")
	}
}

// The state file gives back what was saved, is rewritten only when the
// desired state changes, and leaves no temporary file behind.
func TestStateFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f := newStateFile(dir, "edge-01")
	if err := f.save(testWants(), now); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", info.Mode().Perm())
	}
	// Unchanged: not written again.
	if err := os.Chtimes(f.path, now, now); err != nil {
		t.Fatal(err)
	}
	if err := f.save(testWants(), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(f.path); !info.ModTime().Equal(now) {
		t.Fatal("an unchanged desired state was written again")
	}
	services, err := newStateFile(dir, "edge-01").load(now)
	if err != nil {
		t.Fatal(err)
	}
	back := wantsOf(services)
	if len(back) != 2 || back["t1"].inst.Revision != 3 || back["t2"].svc.Spec.Cmd[0] != "/bin/web" || back["t1"].svc.UID != "u1" {
		t.Fatalf("loaded %+v", back)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the directory holds %d files, want the state file alone", len(entries))
	}
}

// A corrupt, torn, foreign or unknown file is set aside with a reason and
// never trusted.
func TestStateFileRefusals(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	good := func(t *testing.T, dir string) []byte {
		f := newStateFile(dir, "edge-01")
		if err := f.save(testWants(), now); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, tc := range []struct {
		name   string
		mangle func(t *testing.T, dir string, data []byte) []byte
		reason string
	}{
		{"torn in the middle", func(_ *testing.T, _ string, d []byte) []byte { return d[:len(d)/2] }, "is not valid JSON"},
		{"a revision edited by hand", func(_ *testing.T, _ string, d []byte) []byte {
			return []byte(strings.Replace(string(d), `"revision":3`, `"revision":4`, 1))
		}, "does not match its checksum"},
		{"another node's", func(t *testing.T, dir string, _ []byte) []byte {
			other := newStateFile(dir, "edge-02")
			if err := other.save(testWants(), now); err != nil {
				t.Fatal(err)
			}
			d, _ := os.ReadFile(other.path)
			return d
		}, `belongs to node "edge-02"`},
		{"another format", func(_ *testing.T, _ string, _ []byte) []byte { return []byte(`{"kind":"Something","version":9}`) }, "is not an edge agent state file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := tc.mangle(t, dir, good(t, dir))
			f := newStateFile(dir, "edge-01")
			if err := os.WriteFile(f.path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			services, err := f.load(now)
			if err == nil || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "set aside") {
				t.Fatalf("load: %v; want an error saying it %s and was set aside", err, tc.reason)
			}
			if len(services) != 0 {
				t.Fatalf("a refused file gave %d services", len(services))
			}
			if _, err := os.Stat(f.path); !os.IsNotExist(err) {
				t.Fatal("the refused file is still where the agent reads it")
			}
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("edge-01.json.bad-%d", now.Unix()))); err != nil {
				t.Fatalf("the refused file was not kept aside: %v", err)
			}
		})
	}
	// No file: no state, no error.
	if s, err := newStateFile(t.TempDir(), "edge-01").load(now); err != nil || s != nil {
		t.Fatalf("missing file: %v, %v", s, err)
	}
}
