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

// Package sim is the simulated container runtime of the edge agent: the
// runtime of make dev, the tests and the scale runs, one flag away from
// the real one (edge-agent --runtime=sim) and never its default. Its
// options script faults: containers that fail to start or crash, pulls
// that crawl or stall, nodes that go silent.
package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"

	"k8s.io/utils/clock"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
)

// Options script the simulated nodes.
type Options struct {
	// StartDelay is how long a container stays created before it runs.
	StartDelay time.Duration
	// FailImages: containers of images whose ref matches fail to start.
	FailImages *regexp.Regexp
	// CrashImages: containers of images whose ref matches restart at every
	// metrics refresh.
	CrashImages *regexp.Regexp
	// SlowPulls: images whose ref matches are absent until pulled, and a
	// pull of one takes PullTime, its bytes arriving evenly.
	SlowPulls *regexp.Regexp
	PullTime  time.Duration
	// StallPulls: images whose ref matches are absent, and a pull of one
	// never makes progress (the agent's progress deadline cuts it).
	StallPulls *regexp.Regexp
	// SystemContainers is how many containers outside any EdgeService each
	// node runs (the runtime's own, say).
	SystemContainers int
	Clock            clock.Clock
}

// DefaultOptions are the simulator's defaults.
func DefaultOptions() Options {
	return Options{StartDelay: 2 * time.Second, SystemContainers: 1, PullTime: 30 * time.Second, Clock: clock.RealClock{}}
}

// Runtimes returns an agent's NewRuntime for simulated nodes.
func Runtimes(o Options) func(agent.Node, int) (agent.Runtime, error) {
	return func(n agent.Node, i int) (agent.Runtime, error) { return New(n, o, i), nil }
}

// Silence makes a node go quiet, no Lease renewals and no reports, from
// After (since the agent started) for For.
type Silence struct {
	Node       string
	After, For time.Duration
}

// Silent is an agent's Silent option for silences counted from start.
func Silent(silences []Silence, start time.Time) func(node string, now time.Time) bool {
	if len(silences) == 0 {
		return nil
	}
	return func(node string, now time.Time) bool {
		for _, s := range silences {
			if s.Node == node && !now.Before(start.Add(s.After)) && now.Before(start.Add(s.After+s.For)) {
				return true
			}
		}
		return false
	}
}

// runtime is the simulated runtime, one per simulated node: containers
// are created at once, run after Options.StartDelay, and show figures that
// wander.
type runtime struct {
	node   agent.Node
	o      Options
	boot   time.Time
	mu     sync.Mutex
	rnd    *rand.Rand
	cs     map[string]*simContainer
	pulled map[string]bool
	events chan string
}

type simContainer struct {
	agent.Container
	ref   string
	stats agent.Stats
}

// New returns the simulated runtime of the i-th node an agent plays.
func New(n agent.Node, o Options, i int) agent.Runtime {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	start := o.Clock.Now()
	r := &runtime{
		node: n, o: o, boot: start.Add(-time.Duration(i%50+1) * time.Hour).Truncate(time.Second),
		rnd: rand.New(rand.NewPCG(uint64(i), 42)), cs: map[string]*simContainer{}, pulled: map[string]bool{},
		// Far more than a node's containers change at once; a full buffer
		// only delays a change to the next resync.
		events: make(chan string, 256),
	}
	for j := range o.SystemContainers {
		name := fmt.Sprintf("system-%d", j)
		r.cs[r.id(name)] = &simContainer{Container: agent.Container{
			ID: r.id(name), Name: name, State: edgev1alpha1.ContainerRunning, Image: "edge-runtime@1.0#" + n.Type,
			CreatedAt: r.boot, StartedAt: r.boot,
		}}
	}
	return r
}

func (r *runtime) Ping(context.Context) error { return nil }

func (r *runtime) Info(context.Context) (agent.RuntimeInfo, error) {
	return agent.RuntimeInfo{Type: r.node.Type, Arch: r.node.Arch, OSVersion: "sim", RuntimeVersion: "sim-1", BootTime: r.boot}, nil
}

func (r *runtime) List(context.Context) ([]agent.Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]agent.Container, 0, len(r.cs))
	for _, c := range r.cs {
		out = append(out, c.Container)
	}
	return out, nil
}

func (r *runtime) Inspect(_ context.Context, id string) (agent.Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cs[id]
	if c == nil {
		return agent.Container{}, fmt.Errorf("container %s: %w", id, agent.ErrNotFound)
	}
	return c.Container, nil
}

// ImageOf is the image ref itself: the simulator has no registries.
func (r *runtime) ImageOf(spec agent.ContainerSpec) (string, error) {
	return string(spec.Spec.Image.Ref), nil
}

// HasImage: every image is present but those of slow and stalled pulls,
// until pulled.
func (r *runtime) HasImage(_ context.Context, image string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pulled[image] || !(matches(r.o.SlowPulls, image) || matches(r.o.StallPulls, image)), nil
}

// simLayer is the size of a simulated image.
const simLayer = 10 << 20

// PullImage of a slow pull sends its bytes evenly over PullTime, in tenths;
// a stalled one sends nothing until ctx ends.
func (r *runtime) PullImage(ctx context.Context, image string, _ []byte, progress func(agent.PullProgress)) error {
	if matches(r.o.StallPulls, image) {
		progress(agent.PullProgress{Total: simLayer, Status: "Pulling fs layer"})
		<-ctx.Done()
		return fmt.Errorf("pulling image %s failed: %w", image, context.Cause(ctx))
	}
	if matches(r.o.SlowPulls, image) {
		for i := 1; i <= 10; i++ {
			select {
			case <-ctx.Done():
				return fmt.Errorf("pulling image %s failed: %w", image, context.Cause(ctx))
			case <-r.o.Clock.After(r.o.PullTime / 10):
			}
			progress(agent.PullProgress{Done: simLayer * int64(i) / 10, Total: simLayer, Status: "Downloading"})
		}
	}
	r.mu.Lock()
	r.pulled[image] = true
	r.mu.Unlock()
	return nil
}

func matches(re *regexp.Regexp, s string) bool { return re != nil && re.MatchString(s) }

func (r *runtime) Create(_ context.Context, spec agent.ContainerSpec) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := string(spec.Spec.Image.Ref)
	id := r.id(spec.Labels[agent.LabelTaskID] + "/" + spec.Labels[agent.LabelRevision])
	if r.node.Type != "linux" {
		id = spec.Name // the embedded real-time OS names containers by name
	}
	for _, c := range r.cs {
		if c.Name == spec.Name {
			return "", fmt.Errorf("the name %s is already in use by container %s", spec.Name, c.ID)
		}
	}
	r.cs[id] = &simContainer{ref: ref, Container: agent.Container{
		ID: id, Name: spec.Name, Labels: spec.Labels, State: edgev1alpha1.ContainerCreated,
		Image: ref, ImageID: "sha256:" + hash(ref)[:24], CreatedAt: r.o.Clock.Now().Truncate(time.Second),
	}}
	return id, nil
}

func (r *runtime) Start(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cs[id]
	if c == nil {
		return fmt.Errorf("container %s: %w", id, agent.ErrNotFound)
	}
	if r.o.FailImages != nil && r.o.FailImages.MatchString(c.ref) {
		c.State, c.ExitCode = edgev1alpha1.ContainerExited, 127
		return fmt.Errorf("simulated failure: image %s failed to start", c.ref)
	}
	go func() {
		<-r.o.Clock.After(r.o.StartDelay)
		r.mu.Lock()
		if c := r.cs[id]; c != nil && c.State == edgev1alpha1.ContainerCreated {
			c.State, c.StartedAt = edgev1alpha1.ContainerRunning, r.o.Clock.Now().Truncate(time.Second)
			c.stats = agent.Stats{
				CPU:    &edgev1alpha1.CPUUsage{Total: 1, Cores: make([]float64, 2)},
				Memory: &edgev1alpha1.MemoryUsage{Limit: 256 << 20, Usage: 16 << 20, MaxUsage: 16 << 20},
				Size:   &edgev1alpha1.SizeUsage{Usage: 8 << 20, Limit: 1 << 30},
			}
		}
		r.mu.Unlock()
		r.notify(id)
	}()
	return nil
}

func (r *runtime) Stop(_ context.Context, id string, _ time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cs[id]
	if c == nil {
		return fmt.Errorf("container %s: %w", id, agent.ErrNotFound)
	}
	c.State = edgev1alpha1.ContainerExited
	return nil
}

func (r *runtime) Remove(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cs[id] == nil {
		return fmt.Errorf("container %s: %w", id, agent.ErrNotFound)
	}
	delete(r.cs, id)
	return nil
}

// Stats lets the figures wander, and restarts a container of a crashing
// image at every sample.
func (r *runtime) Stats(_ context.Context, id string) (agent.Stats, error) {
	r.mu.Lock()
	c := r.cs[id]
	if c == nil || c.State != edgev1alpha1.ContainerRunning || c.stats.CPU == nil {
		r.mu.Unlock()
		return agent.Stats{}, fmt.Errorf("container %s is not running", id)
	}
	st := &c.stats
	total := 0.0
	for i := range st.CPU.Cores {
		st.CPU.Cores[i] = agent.Percent(clamp(st.CPU.Cores[i]+r.rnd.NormFloat64()*5, 0, 100))
		total += st.CPU.Cores[i]
	}
	st.CPU.Total = agent.Percent(total / float64(len(st.CPU.Cores)))
	st.Memory.Usage = int64(clamp(float64(st.Memory.Usage)+r.rnd.NormFloat64()*4e6, 4<<20, float64(st.Memory.Limit)))
	st.Memory.MaxUsage = max(st.Memory.MaxUsage, st.Memory.Usage)
	st.Size.Usage = min(st.Size.Limit, st.Size.Usage+int64(r.rnd.IntN(1<<16)))
	crashed := r.o.CrashImages != nil && r.o.CrashImages.MatchString(c.ref)
	if crashed {
		c.RestartCount++
		c.StartedAt = r.o.Clock.Now().Truncate(time.Second)
	}
	out := agent.Stats{CPU: st.CPU.DeepCopy(), Memory: st.Memory.DeepCopy(), Size: st.Size.DeepCopy()}
	r.mu.Unlock()
	if crashed {
		r.notify(id)
	}
	return out, nil
}

func (r *runtime) Events(context.Context) <-chan string { return r.events }

func (r *runtime) notify(id string) {
	select {
	case r.events <- id:
	default:
	}
}

func (r *runtime) id(seed string) string { return hash(r.node.Name + "/" + seed)[:12] }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func clamp(v, lo, hi float64) float64 { return min(hi, max(lo, v)) }
