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

package docker

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/registry"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestImageName(t *testing.T) {
	for _, tc := range []struct {
		ref, path, registry, want, err string
	}{
		{ref: "nginx@1.25#linux", want: "nginx:1.25"},
		{ref: "plant/gateway@1.4.2#linux", want: "plant/gateway:1.4.2"},
		{ref: "gateway@1.4.2#linux", path: "registry.plant-a.local/sensor-gateway", want: "registry.plant-a.local/sensor-gateway:1.4.2"},
		{ref: "gateway@1.4.2#linux", registry: "edgeplane.local", want: "edgeplane.local/gateway:1.4.2"},
		{ref: "gateway@1.4.2#linux", registry: "edgeplane.local/", want: "edgeplane.local/gateway:1.4.2"},
		{ref: "gateway@1.4.2#linux", path: "plant/gw", registry: "reg:5000", want: "reg:5000/plant/gw:1.4.2"},
		// A path that names its registry is not prefixed again.
		{ref: "gateway@1.4.2#linux", path: "other.local/gw", registry: "reg:5000", want: "other.local/gw:1.4.2"},
		{ref: "gateway@1.4.2#linux", path: "localhost/gw", registry: "reg:5000", want: "localhost/gw:1.4.2"},
		{ref: "gateway@latest#linux", path: "localhost:5000/gw/", want: "localhost:5000/gw:latest"},
		{ref: "not a ref", err: "name@tag#os"},
	} {
		got, err := imageName(edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(tc.ref), Path: tc.path}, tc.registry)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("imageName(%q): error %v, want one containing %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("imageName(%q, path %q, registry %q) = %q, %v; want %q", tc.ref, tc.path, tc.registry, got, err, tc.want)
		}
	}
}

func TestContainerConfig(t *testing.T) {
	labels := map[string]string{"io.edgeplane.task-id": "t1"}
	full := &edgev1alpha1.LinuxConfig{
		Hostname: "gw", Env: []string{"A=1"}, Cmd: []string{"/bin/gw", "--port=9000"}, Restart: "on-failure",
		Network: "host", Memory: 64 << 20, HealthCmd: []string{"/bin/gw", "health"},
	}
	for _, tc := range []struct {
		name     string
		spec     edgev1alpha1.DeploySpec
		wantCfg  *container.Config
		wantHost *container.HostConfig
		errs     []string
	}{{
		name:     "nothing set: the image's command, no restart",
		spec:     edgev1alpha1.DeploySpec{},
		wantCfg:  &container.Config{Image: "img:1", Labels: labels},
		wantHost: &container.HostConfig{RestartPolicy: container.RestartPolicy{Name: "no"}},
	}, {
		name:     "spec.cmd is the command",
		spec:     edgev1alpha1.DeploySpec{Cmd: []string{"sleep", "1"}},
		wantCfg:  &container.Config{Image: "img:1", Labels: labels, Cmd: []string{"sleep", "1"}},
		wantHost: &container.HostConfig{RestartPolicy: container.RestartPolicy{Name: "no"}},
	}, {
		name: "every Linux key maps",
		spec: edgev1alpha1.DeploySpec{Config: &edgev1alpha1.ServiceConfig{Linux: full}},
		wantCfg: &container.Config{
			Image: "img:1", Labels: labels, Hostname: "gw", Env: []string{"A=1"}, Cmd: []string{"/bin/gw", "--port=9000"},
			Healthcheck: &container.HealthConfig{Test: []string{"CMD", "/bin/gw", "health"}},
		},
		wantHost: &container.HostConfig{
			RestartPolicy: container.RestartPolicy{Name: "on-failure"}, NetworkMode: "host", Resources: container.Resources{Memory: 64 << 20},
		},
	}, {
		name: "a health command in the engine's own form is kept",
		spec: edgev1alpha1.DeploySpec{Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{HealthCmd: []string{"CMD-SHELL", "true"}}}},
		wantCfg: &container.Config{Image: "img:1", Labels: labels,
			Healthcheck: &container.HealthConfig{Test: []string{"CMD-SHELL", "true"}}},
		wantHost: &container.HostConfig{RestartPolicy: container.RestartPolicy{Name: "no"}},
	}, {
		name:     "the same cmd in both places is no conflict",
		spec:     edgev1alpha1.DeploySpec{Cmd: []string{"a"}, Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Cmd: []string{"a"}}}},
		wantCfg:  &container.Config{Image: "img:1", Labels: labels, Cmd: []string{"a"}},
		wantHost: &container.HostConfig{RestartPolicy: container.RestartPolicy{Name: "no"}},
	}, {
		name: "embedded config, vsoa and differing commands are each refused",
		spec: edgev1alpha1.DeploySpec{Cmd: []string{"a"}, VSOA: &edgev1alpha1.VSOAConfig{Port: 3001}, Config: &edgev1alpha1.ServiceConfig{Embedded: &edgev1alpha1.EmbeddedConfig{Name: "x"}, Linux: &edgev1alpha1.LinuxConfig{Cmd: []string{"b"}}}},
		errs: []string{"cannot run on a Docker Engine", "config.embedded", "vsoa", "cmd and config.linux.cmd differ"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			cfg, host, err := containerConfig(&spec, "img:1", labels)
			if len(tc.errs) > 0 {
				if err == nil {
					t.Fatalf("no error; want one saying %q", tc.errs)
				}
				for _, e := range tc.errs {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error %q does not say %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg, tc.wantCfg) {
				t.Errorf("config = %+v, want %+v", cfg, tc.wantCfg)
			}
			if !reflect.DeepEqual(host, tc.wantHost) {
				t.Errorf("host config = %+v, want %+v", host, tc.wantHost)
			}
		})
	}
}

func TestCPUUsage(t *testing.T) {
	sec := uint64(1e9)
	for _, tc := range []struct {
		name      string
		prev, cur cpuSample
		want      edgev1alpha1.CPUUsage
	}{{
		name: "no earlier sample: no rate",
		cur:  cpuSample{total: 5 * sec, system: 100 * sec, perCPU: []uint64{3 * sec, 2 * sec}, online: 2},
		want: edgev1alpha1.CPUUsage{Cores: []float64{0, 0}},
	}, {
		// 2 cores, 10 s of wall time = 20 s of system time; the container
		// used 5 s: 25 % of the machine, 40 % and 10 % of each core.
		name: "a rate between two samples",
		prev: cpuSample{total: 10 * sec, system: 100 * sec, perCPU: []uint64{6 * sec, 4 * sec}, online: 2},
		cur:  cpuSample{total: 15 * sec, system: 120 * sec, perCPU: []uint64{10 * sec, 5 * sec}, online: 2},
		want: edgev1alpha1.CPUUsage{Total: 25, Cores: []float64{40, 10}},
	}, {
		name: "counters that went back (a restart) give no rate",
		prev: cpuSample{total: 10 * sec, system: 100 * sec, online: 2},
		cur:  cpuSample{total: 1 * sec, system: 120 * sec, online: 2},
		want: edgev1alpha1.CPUUsage{Cores: []float64{0, 0}},
	}, {
		name: "no per-core counters (cgroup v2): the total only",
		prev: cpuSample{total: 0, system: 100 * sec, online: 4},
		cur:  cpuSample{total: 4 * sec, system: 140 * sec, online: 4},
		want: edgev1alpha1.CPUUsage{Total: 10, Cores: []float64{0, 0, 0, 0}},
	}} {
		if got := cpuUsage(tc.prev, tc.cur); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: cpuUsage = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestMemoryUsage(t *testing.T) {
	for _, tc := range []struct {
		ms   container.MemoryStats
		want int64
	}{
		{container.MemoryStats{Usage: 100}, 100},
		{container.MemoryStats{Usage: 100, Stats: map[string]uint64{"inactive_file": 30}}, 70},
		{container.MemoryStats{Usage: 100, Stats: map[string]uint64{"total_inactive_file": 40}}, 60},
		{container.MemoryStats{Usage: 100, Stats: map[string]uint64{"inactive_file": 300}}, 100},
	} {
		if got := memoryUsage(tc.ms); got != tc.want {
			t.Errorf("memoryUsage(%+v) = %d, want %d", tc.ms, got, tc.want)
		}
	}
}

func TestMapState(t *testing.T) {
	for in, want := range map[container.ContainerState]edgev1alpha1.ContainerState{
		container.StateCreated: "created", container.StateRunning: "running", container.StatePaused: "paused",
		container.StateExited: "exited", container.StateRestarting: "exited", container.StateDead: "exited", container.StateRemoving: "exited",
	} {
		if got := mapState(in); got != want {
			t.Errorf("mapState(%s) = %s, want %s", in, got, want)
		}
	}
}

// The engine gets the credentials of the image's registry, and none for
// another registry.
func TestRegistryAuth(t *testing.T) {
	creds := []byte(`{"auths":{"127.0.0.1:5000":{"username":"robot","password":"pw"},"https://index.docker.io/v1/":{"auth":"aHViOmh1YnB3"}}}`)
	for _, tc := range []struct {
		image, want string // want: user:password@serveraddress, or "" for no header
	}{
		{"127.0.0.1:5000/edgeplane/box:1", "robot:pw@127.0.0.1:5000"},
		{"busybox:1.36", "hub:hubpw@docker.io"},
		{"registry.plant-a.local/box:1", ""},
	} {
		header, err := registryAuth(creds, tc.image)
		if err != nil {
			t.Fatalf("%s: %v", tc.image, err)
		}
		got := ""
		if header != "" {
			raw, err := base64.URLEncoding.DecodeString(header)
			if err != nil {
				t.Fatalf("%s: the header is not base64url: %v", tc.image, err)
			}
			var ac registry.AuthConfig
			if err := json.Unmarshal(raw, &ac); err != nil {
				t.Fatal(err)
			}
			got = ac.Username + ":" + ac.Password + "@" + ac.ServerAddress
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.image, got, tc.want)
		}
	}
	if h, err := registryAuth(nil, "busybox"); h != "" || err != nil {
		t.Errorf("no credentials: %q, %v", h, err)
	}
	if _, err := registryAuth([]byte("not json"), "busybox"); err == nil {
		t.Error("credentials that are not a Docker config gave no error")
	}
}
