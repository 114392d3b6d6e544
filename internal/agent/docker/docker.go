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

// Package docker is the agent's runtime for the Docker Engine API, as
// Docker Engine and Podman (`podman system service`) serve it, through the
// maintained moby client with API version negotiation.
package docker

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	units "github.com/docker/go-units"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/shared/registryauth"
)

// Options configure the runtime.
type Options struct {
	// Endpoint is the engine's API address, e.g. unix:///run/podman/podman.sock;
	// empty means DOCKER_HOST, else unix:///var/run/docker.sock.
	Endpoint string
	// Registry, when set, prefixes image repositories that name no registry.
	Registry string
}

// Runtime runs a node's containers on a Docker Engine API.
type Runtime struct {
	cli      *client.Client
	o        Options
	mu       sync.Mutex
	prevCPU  map[string]cpuSample
	maxUsage map[string]int64
}

var _ agent.Runtime = (*Runtime)(nil)

// New connects to the engine (lazily: the first call negotiates the API version).
func New(o Options) (*Runtime, error) {
	opts := []client.Opt{client.FromEnv}
	if o.Endpoint != "" {
		opts = append(opts, client.WithHost(o.Endpoint))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker runtime: %w", err)
	}
	return &Runtime{cli: cli, o: o, prevCPU: map[string]cpuSample{}, maxUsage: map[string]int64{}}, nil
}

// Close releases the client's connections.
func (r *Runtime) Close() error { return r.cli.Close() }

// Info reads the engine's version and the host it runs on. The boot time
// is this host's: the agent runs on the node whose engine it drives.
// Ping asks the engine's /_ping, as its CLIs do before anything else.
func (r *Runtime) Ping(ctx context.Context) error {
	_, err := r.cli.Ping(ctx, client.PingOptions{})
	return err
}

func (r *Runtime) Info(ctx context.Context) (agent.RuntimeInfo, error) {
	v, err := r.cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return agent.RuntimeInfo{}, fmt.Errorf("the container engine at %s does not answer: %w", r.cli.DaemonHost(), err)
	}
	info, err := r.cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return agent.RuntimeInfo{}, err
	}
	engine := v.Platform.Name
	if len(v.Components) > 0 {
		engine = v.Components[0].Name // "Podman Engine", or Docker's "Engine"
	}
	if engine == "Engine" || engine == "" {
		engine = "Docker Engine"
	}
	return agent.RuntimeInfo{
		Type: strings.ToLower(v.Os), Arch: v.Arch,
		OSVersion:      strings.TrimSpace(info.Info.OperatingSystem + " " + info.Info.KernelVersion),
		RuntimeVersion: strings.TrimSpace(fmt.Sprintf("%s %s (API %s)", engine, v.Version, r.cli.ClientVersion())),
		BootTime:       bootTime(),
	}, nil
}

// List returns every container of the engine, running or not.
func (r *Runtime) List(ctx context.Context) ([]agent.Container, error) {
	res, err := r.cli.ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		return nil, err
	}
	out := make([]agent.Container, 0, len(res.Items))
	for _, s := range res.Items {
		name := ""
		if len(s.Names) > 0 {
			name = strings.TrimPrefix(s.Names[0], "/")
		}
		out = append(out, agent.Container{
			ID: shortID(s.ID), Name: name, Labels: s.Labels, State: mapState(s.State), Image: s.Image, ImageID: s.ImageID,
			CreatedAt: time.Unix(s.Created, 0),
		})
	}
	return out, nil
}

// Inspect reads one container in full.
func (r *Runtime) Inspect(ctx context.Context, id string) (agent.Container, error) {
	res, err := r.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return agent.Container{}, notFound(id, err)
	}
	c := res.Container
	out := agent.Container{
		ID: shortID(c.ID), Name: strings.TrimPrefix(c.Name, "/"), ImageID: c.Image,
		RestartCount: int32(c.RestartCount), CreatedAt: parseTime(c.Created),
	}
	if c.Config != nil {
		out.Labels, out.Image = c.Config.Labels, c.Config.Image
	}
	if s := c.State; s != nil {
		out.State, out.ExitCode, out.OOMKilled, out.Error = mapState(s.Status), s.ExitCode, s.OOMKilled, s.Error
		out.StartedAt = parseTime(s.StartedAt)
	}
	return out, nil
}

// ImageOf is the engine's name of a spec's image, with the runtime's
// registry prefixed when the service names none.
func (r *Runtime) ImageOf(spec agent.ContainerSpec) (string, error) {
	return imageName(spec.Spec.Image, r.o.Registry)
}

// HasImage asks the engine's image store.
func (r *Runtime) HasImage(ctx context.Context, image string) (bool, error) {
	_, err := r.cli.ImageInspect(ctx, image)
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("looking up image %s failed: %w", image, err)
	}
}

// PullImage pulls an image, reading the engine's progress stream: bytes
// received are summed over the layers, as the engines' CLIs show them.
func (r *Runtime) PullImage(ctx context.Context, image string, creds []byte, progress func(agent.PullProgress)) error {
	auth, err := registryAuth(creds, image)
	if err != nil {
		return err
	}
	resp, err := r.cli.ImagePull(ctx, image, client.ImagePullOptions{RegistryAuth: auth})
	if err != nil {
		return fmt.Errorf("pulling image %s failed: %w", image, err)
	}
	defer func() { _ = resp.Close() }()
	layers := pullLayers{}
	for m, err := range resp.JSONMessages(ctx) {
		if err == nil && m.Error != nil {
			err = errors.New(m.Error.Message)
		}
		if err != nil {
			return fmt.Errorf("pulling image %s failed: %w", image, err)
		}
		if p, ok := layers.add(m.ID, m.Status, m.Progress); ok && progress != nil {
			progress(p)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("pulling image %s failed: %w", image, context.Cause(ctx))
	}
	return nil
}

// Create creates the container of an image that is present.
func (r *Runtime) Create(ctx context.Context, spec agent.ContainerSpec) (string, error) {
	image, err := imageName(spec.Spec.Image, r.o.Registry)
	if err != nil {
		return "", err
	}
	cfg, host, err := containerConfig(spec.Spec, image, spec.Labels)
	if err != nil {
		return "", err
	}
	res, err := r.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: spec.Name, Config: cfg, HostConfig: host})
	if err != nil {
		return "", fmt.Errorf("creating the container of image %s failed: %w", image, err)
	}
	return shortID(res.ID), nil
}

func (r *Runtime) Start(ctx context.Context, id string) error {
	if _, err := r.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("starting the container failed: %w", notFound(id, err))
	}
	return nil
}

func (r *Runtime) Stop(ctx context.Context, id string, timeout time.Duration) error {
	secs := int(timeout / time.Second)
	_, err := r.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &secs})
	return notFound(id, err)
}

func (r *Runtime) Remove(ctx context.Context, id string) error {
	_, err := r.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	r.mu.Lock()
	delete(r.prevCPU, id)
	delete(r.maxUsage, id)
	r.mu.Unlock()
	return notFound(id, err)
}

// Stats takes one sample of the engine's counters; cpu is the rate since
// the previous sample, memory the usage less page cache with the highest
// usage seen, size the writable layer (limit 0 when the engine sets none).
func (r *Runtime) Stats(ctx context.Context, id string) (agent.Stats, error) {
	res, err := r.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		return agent.Stats{}, notFound(id, err)
	}
	defer func() { _ = res.Body.Close() }()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return agent.Stats{}, fmt.Errorf("reading the stats of %s: %w", id, err)
	}
	size, err := r.size(ctx, id)
	if err != nil {
		return agent.Stats{}, err
	}
	cur := cpuSample{total: st.CPUStats.CPUUsage.TotalUsage, system: st.CPUStats.SystemUsage, perCPU: st.CPUStats.CPUUsage.PercpuUsage, online: st.CPUStats.OnlineCPUs}
	usage := memoryUsage(st.MemoryStats)
	r.mu.Lock()
	prev, ok := r.prevCPU[id]
	if !ok && st.PreCPUStats.SystemUsage != 0 {
		prev = cpuSample{total: st.PreCPUStats.CPUUsage.TotalUsage, system: st.PreCPUStats.SystemUsage, perCPU: st.PreCPUStats.CPUUsage.PercpuUsage}
	}
	r.prevCPU[id] = cur
	maxUsage := max(r.maxUsage[id], usage, int64(st.MemoryStats.MaxUsage))
	r.maxUsage[id] = maxUsage
	r.mu.Unlock()
	cpu := cpuUsage(prev, cur)
	return agent.Stats{
		CPU:    &cpu,
		Memory: &edgev1alpha1.MemoryUsage{Limit: int64(st.MemoryStats.Limit), Usage: usage, MaxUsage: maxUsage},
		Size:   size,
	}, nil
}

func (r *Runtime) size(ctx context.Context, id string) (*edgev1alpha1.SizeUsage, error) {
	res, err := r.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{Size: true})
	if err != nil {
		return nil, notFound(id, err)
	}
	out := &edgev1alpha1.SizeUsage{}
	if res.Container.SizeRw != nil {
		out.Usage = *res.Container.SizeRw
	}
	if h := res.Container.HostConfig; h != nil && h.StorageOpt["size"] != "" {
		if n, err := units.RAMInBytes(h.StorageOpt["size"]); err == nil {
			out.Limit = n
		}
	}
	return out, nil
}

// Events forwards the ids of containers the engine reports a change of.
func (r *Runtime) Events(ctx context.Context) <-chan string {
	out := make(chan string, 64)
	res := r.cli.Events(ctx, client.EventsListOptions{Filters: make(client.Filters).Add("type", "container")})
	go func() {
		defer close(out)
		for {
			select {
			case m := <-res.Messages:
				if strings.HasPrefix(string(m.Action), "exec_") {
					continue // commands run inside a container change nothing we report
				}
				select {
				case out <- shortID(m.Actor.ID):
				case <-ctx.Done():
					return
				}
			case <-res.Err:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// notFound wraps the engine's not-found errors so the node loop sees agent.ErrNotFound.
func notFound(id string, err error) error {
	if err != nil && cerrdefs.IsNotFound(err) {
		return fmt.Errorf("container %s: %w (%v)", id, agent.ErrNotFound, err)
	}
	return err
}

// shortID is the 12-character id the engines' own CLIs show; every engine
// call accepts it.
func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// bootTime is this host's boot time, from /proc/stat; zero when unknown.
func bootTime() time.Time {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(secs, 0)
			}
		}
	}
	return time.Time{}
}

// registryAuth is the engine's X-Registry-Auth value for pulling image
// with a service's credentials (a Docker config.json): base64url of the
// entry for the image's registry; empty when there is none.
func registryAuth(creds []byte, image string) (string, error) {
	if len(creds) == 0 {
		return "", nil
	}
	c, err := registryauth.Parse(creds)
	if err != nil {
		return "", fmt.Errorf("the node's registry credentials for image %s: %w", image, err)
	}
	e, domain, ok, err := registryauth.For(c, image)
	if err != nil || !ok {
		return "", err
	}
	data, err := json.Marshal(registry.AuthConfig{Username: e.Username, Password: e.Password, ServerAddress: domain,
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken})
	if err != nil {
		return "", err
	}
	return base64.URLEncoding.EncodeToString(data), nil
}
