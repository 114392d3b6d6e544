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

package soak

import (
	"errors"
	"testing"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestEngineKind(t *testing.T) {
	tests := []struct {
		flag      string
		skipped   bool
		kind, why string
		err       bool
	}{
		{flag: "podman", kind: "podman"},
		{flag: "docker", kind: "docker"},
		{flag: "none", why: "--engine none"},
		{flag: "none", skipped: true, why: "--engine none"},
		{flag: "podman", skipped: true, why: "EDGEPLANE_SKIP_ENGINE=1"},
		{flag: "containerd", err: true},
		{flag: "", err: true},
	}
	for _, tc := range tests {
		kind, why, err := EngineKind(tc.flag, tc.skipped)
		if kind != tc.kind || why != tc.why || (err != nil) != tc.err {
			t.Errorf("EngineKind(%q, %v) = %q, %q, %v; want %q, %q, error %v", tc.flag, tc.skipped, kind, why, err, tc.kind, tc.why, tc.err)
		}
	}
}

// Why an engine did not start is said in one line: the failure, and what
// hack/engine.sh said of it last.
func TestEngineWhy(t *testing.T) {
	tests := []struct {
		name, err, want string
	}{
		{"one line", "hack/engine.sh start: exec: \"bash\": not found", "hack/engine.sh start: exec: \"bash\": not found"},
		{"the script's own last line", "hack/engine.sh start: exit status 1\nE: Unable to locate package podman\n" +
			"engine: the engine's packages are missing, or their install failed\napt-get: cleanup\n",
			"hack/engine.sh start: exit status 1: the engine's packages are missing, or their install failed"},
		{"the last of two of the script's", "hack/engine.sh start: exit status 1\nengine: first\nError: cannot listen\nengine: the podman engine did not answer on unix:///tmp/e/podman.sock\n",
			"hack/engine.sh start: exit status 1: the podman engine did not answer on unix:///tmp/e/podman.sock"},
		{"no line of the script's", "hack/engine.sh start: exit status 126\n  permission denied  \n\n", "hack/engine.sh start: exit status 126: permission denied"},
		{"nothing said", "\n", "no reason given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := EngineWhy(errors.New(tc.err)); got != tc.want {
				t.Errorf("EngineWhy = %q; want %q", got, tc.want)
			}
		})
	}
}

// Each of the real node's services changes every period, the services in
// turn and evenly apart.
func TestRealChange(t *testing.T) {
	type change struct {
		service int
		at      time.Duration
	}
	tests := []struct {
		services int
		every    time.Duration
		want     []change
	}{
		{2, 2 * time.Minute, []change{{0, time.Minute}, {1, 2 * time.Minute}, {0, 3 * time.Minute}, {1, 4 * time.Minute}}},
		{1, 2 * time.Minute, []change{{0, 2 * time.Minute}, {0, 4 * time.Minute}}},
		{3, 90 * time.Second, []change{{0, 30 * time.Second}, {1, time.Minute}, {2, 90 * time.Second}, {0, 2 * time.Minute}}},
	}
	for _, tc := range tests {
		for k, w := range tc.want {
			if s, at := RealChange(k, tc.services, tc.every); s != w.service || at != w.at {
				t.Errorf("RealChange(%d, %d, %v) = %d, %v; want %d, %v", k, tc.services, tc.every, s, at, w.service, w.at)
			}
		}
	}
}

func TestChangeMark(t *testing.T) {
	linux := func(env ...string) *edgev1alpha1.EdgeServiceSpec {
		return &edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: env}}}}
	}
	changed := linux()
	setChange(changed, 12)
	tests := []struct {
		name string
		spec *edgev1alpha1.EdgeServiceSpec
		want string
	}{
		{"as the churn sets it", changed, "CHANGE=12"},
		{"among other entries", linux("A=1", "CHANGE=3", "B=2"), "CHANGE=3"},
		{"none", linux("A=1"), ""},
		{"no linux config", &edgev1alpha1.EdgeServiceSpec{}, ""},
	}
	for _, tc := range tests {
		if got := ChangeMark(tc.spec); got != tc.want {
			t.Errorf("%s: ChangeMark = %q; want %q", tc.name, got, tc.want)
		}
	}
}

// The real node's services are static on it alone, pull from the run's
// registry with its Secret, and start at CHANGE=0.
func TestRealService(t *testing.T) {
	s := realService(1, "127.0.0.1:5000")
	if s.Name != "real-01" || s.Spec.Policy != edgev1alpha1.PolicyStatic || len(s.Spec.Nodes) != 1 || s.Spec.Nodes[0] != realNodeName {
		t.Errorf("realService(1) = %s %s %v; want real-01, static on %s alone", s.Name, s.Spec.Policy, s.Spec.Nodes, realNodeName)
	}
	if s.Spec.Image.Path != "127.0.0.1:5000/edgeplane/box" || len(s.Spec.Image.PullSecretRefs) != 1 || s.Spec.Image.PullSecretRefs[0].Name != realRegistrySecret {
		t.Errorf("image %+v; want the run's registry and its Secret", s.Spec.Image)
	}
	if got := ChangeMark(&s.Spec); got != "CHANGE=0" {
		t.Errorf("ChangeMark = %q; want CHANGE=0", got)
	}
}
