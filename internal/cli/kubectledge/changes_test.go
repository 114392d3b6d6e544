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

package kubectledge

import (
	"slices"
	"strings"
	"testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/records"
)

func TestChanges(t *testing.T) {
	base := func() records.Config {
		c := records.Config{}
		c.Image.Ref = "app@1.0#linux"
		c.Policy = edgev1alpha1.PolicyStatic
		c.Nodes = []string{"a"}
		return c
	}
	for _, tc := range []struct {
		name   string
		change func(c *records.Config)
		want   []string
	}{
		{"nothing", func(*records.Config) {}, nil},
		{"the image", func(c *records.Config) { c.Image.Ref = "app@1.1#linux" }, []string{`image.ref: "app@1.0#linux" -> "app@1.1#linux"`}},
		{"a list is one value", func(c *records.Config) { c.Nodes = []string{"a", "b"} }, []string{`nodes: ["a"] -> ["a","b"]`}},
		{"set and removed, by key", func(c *records.Config) {
			c.Cmd = []string{"run"}
			c.Nodes = nil
		}, []string{`cmd: set to ["run"]`, `nodes: removed (was ["a"])`}},
		{"nested", func(c *records.Config) {
			c.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"A=1"}}}
		}, []string{`config.linux.env: set to ["A=1"]`}},
		{"a long value is cut, not a character", func(c *records.Config) { c.Cmd = []string{strings.Repeat("é", 100)} },
			[]string{`cmd: set to ["` + strings.Repeat("é", maxValue-5) + `...`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := base()
			tc.change(&after)
			got, err := changes(base(), after)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("changes:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestServiceName(t *testing.T) {
	for arg, want := range map[string]string{"es/web": "web", "web": "web", "EdgeService/web": "web", "edgeservices.edge.edgeplane.io/web": "web",
		"deploy/web": "", "es/": ""} {
		got, err := serviceName(arg)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("serviceName(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
}

// The revision undo returns from, and history marks current: a change is
// current once recorded, though its status may come later (the manager
// holds a rollout's progress up to --status-hold).
func TestCurrentRevision(t *testing.T) {
	recs := func(revs ...int64) []edgev1alpha1.DeployRecord {
		out := make([]edgev1alpha1.DeployRecord, len(revs))
		for i, r := range revs {
			out[i].Spec.Revision = r
		}
		return out
	}
	svc := func(rev int64) *edgev1alpha1.EdgeService {
		return &edgev1alpha1.EdgeService{Status: edgev1alpha1.EdgeServiceStatus{Revision: rev}}
	}
	for _, tc := range []struct {
		name string
		svc  *edgev1alpha1.EdgeService
		recs []edgev1alpha1.DeployRecord
		want int64
	}{
		{"the status names the newest record", svc(3), recs(1, 2, 3), 3},
		{"a change recorded, its status not written yet", svc(3), recs(1, 2, 3, 4), 4},
		{"the current record deleted by hand", svc(3), recs(1, 2), 3},
		{"nothing recorded yet", svc(0), nil, 0},
	} {
		if got := currentRevision(tc.svc, tc.recs); got != tc.want {
			t.Errorf("%s: currentRevision = %d, want %d", tc.name, got, tc.want)
		}
	}
}
