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
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
)

// imageName is the engine image an image spec runs: name:tag of the ref
// `name@tag#os`, from image.path when set, behind the agent's registry
// when one is given and the repository names no registry of its own.
func imageName(img edgev1alpha1.ImageSpec, registry string) (string, error) {
	ref, err := imageref.Parse(string(img.Ref))
	if err != nil {
		return "", err
	}
	repo := ref.Name
	if img.Path != "" {
		repo = strings.TrimSuffix(img.Path, "/")
	}
	if registry != "" && !hasRegistry(repo) {
		repo = strings.TrimSuffix(registry, "/") + "/" + repo
	}
	return repo + ":" + ref.Tag, nil
}

// hasRegistry says whether a repository's first component is a registry
// host, by the rule the engines themselves use.
func hasRegistry(repo string) bool {
	first, _, ok := strings.Cut(repo, "/")
	return ok && (strings.ContainsAny(first, ".:") || first == "localhost")
}

// containerConfig maps a service's spec to the engine's container and host
// configuration. What the engine cannot do is refused, never dropped.
func containerConfig(spec *edgev1alpha1.DeploySpec, image string, labels map[string]string) (*container.Config, *container.HostConfig, error) {
	var errs []error
	if spec.Config != nil && spec.Config.Embedded != nil {
		errs = append(errs, errors.New("config.embedded is for the embedded real-time OS; a Docker Engine runs Linux containers (use config.linux)"))
	}
	if spec.VSOA != nil {
		errs = append(errs, errors.New("vsoa (the messaging configuration) has no equivalent in the Docker Engine API"))
	}
	var lc edgev1alpha1.LinuxConfig
	if spec.Config != nil && spec.Config.Linux != nil {
		lc = *spec.Config.Linux
	}
	cmd := spec.Cmd
	if len(lc.Cmd) > 0 {
		if len(cmd) > 0 && !slices.Equal(cmd, lc.Cmd) {
			errs = append(errs, errors.New("cmd and config.linux.cmd differ; set one of them"))
		}
		cmd = lc.Cmd
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, fmt.Errorf("the service cannot run on a Docker Engine: %w", err)
	}
	cfg := &container.Config{Image: image, Cmd: cmd, Env: lc.Env, Hostname: lc.Hostname, Labels: labels}
	if len(lc.HealthCmd) > 0 {
		test := lc.HealthCmd
		switch test[0] {
		case "CMD", "CMD-SHELL", "NONE":
		default:
			test = append([]string{"CMD"}, test...)
		}
		cfg.Healthcheck = &container.HealthConfig{Test: test}
	}
	host := &container.HostConfig{
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyMode(lc.Restart)},
		NetworkMode:   container.NetworkMode(lc.Network),
		Resources:     container.Resources{Memory: lc.Memory},
	}
	if lc.Restart == "" {
		host.RestartPolicy.Name = container.RestartPolicyDisabled
	}
	return cfg, host, nil
}

// cpuSample is what the engine's counters said at one moment.
type cpuSample struct {
	total, system uint64
	perCPU        []uint64
	online        uint32
}

// cpuUsage is the share of the machine a container used between two
// samples: total as a percent of all cores (0 to 100), and each core's
// percent. Without an earlier sample there is no rate: 0.
func cpuUsage(prev, cur cpuSample) edgev1alpha1.CPUUsage {
	n := int(cur.online)
	if n == 0 {
		n = len(cur.perCPU)
	}
	out := edgev1alpha1.CPUUsage{Cores: make([]float64, n)}
	if prev.system == 0 || cur.system <= prev.system || cur.total < prev.total {
		return out
	}
	sys := float64(cur.system - prev.system)
	out.Total = agent.Percent(float64(cur.total-prev.total) / sys * 100)
	if len(cur.perCPU) == len(prev.perCPU) && n > 0 {
		perCore := sys / float64(n)
		for i := range min(n, len(cur.perCPU)) {
			if cur.perCPU[i] >= prev.perCPU[i] {
				out.Cores[i] = agent.Percent(min(100, float64(cur.perCPU[i]-prev.perCPU[i])/perCore*100))
			}
		}
	}
	return out
}

// memoryUsage is the memory in use as the engine's own CLI counts it:
// usage less the inactive page cache.
func memoryUsage(ms container.MemoryStats) int64 {
	usage := ms.Usage
	for _, k := range []string{"inactive_file", "total_inactive_file"} { // cgroup v2, v1
		if v, ok := ms.Stats[k]; ok && v < usage {
			return int64(usage - v)
		}
	}
	return int64(usage)
}

func mapState(s container.ContainerState) edgev1alpha1.ContainerState {
	switch s {
	case container.StateCreated:
		return edgev1alpha1.ContainerCreated
	case container.StateRunning:
		return edgev1alpha1.ContainerRunning
	case container.StatePaused:
		return edgev1alpha1.ContainerPaused
	default: // exited, restarting (between two runs), removing, dead
		return edgev1alpha1.ContainerExited
	}
}
