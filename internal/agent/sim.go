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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// simRuntime is the simulated runtime, one per simulated node: containers
// are created at once, run after Options.StartDelay, and show figures that
// wander. FailImages, CrashImages and SystemContainers script its faults
// and its own containers. It is the runtime of the scale runs.
type simRuntime struct {
	node   Node
	o      Options
	boot   time.Time
	mu     sync.Mutex
	rnd    *rand.Rand
	cs     map[string]*simContainer
	events chan string
}

type simContainer struct {
	Container
	ref   string
	stats Stats
}

// NewSimRuntime returns the simulated runtime of the i-th node an agent plays.
func NewSimRuntime(n Node, o Options, i int) Runtime {
	start := o.Clock.Now()
	r := &simRuntime{
		node: n, o: o, boot: start.Add(-time.Duration(i%50+1) * time.Hour).Truncate(time.Second),
		rnd: rand.New(rand.NewPCG(uint64(i), 42)), cs: map[string]*simContainer{},
		// Far more than a node's containers change at once; a full buffer
		// only delays a change to the next resync.
		events: make(chan string, 256),
	}
	for j := range o.SystemContainers {
		name := fmt.Sprintf("system-%d", j)
		r.cs[r.id(name)] = &simContainer{Container: Container{
			ID: r.id(name), Name: name, State: edgev1alpha1.ContainerRunning, Image: "edge-runtime@1.0#" + n.Type,
			CreatedAt: r.boot, StartedAt: r.boot,
		}}
	}
	return r
}

func (r *simRuntime) Ping(context.Context) error { return nil }

func (r *simRuntime) Info(context.Context) (RuntimeInfo, error) {
	return RuntimeInfo{Type: r.node.Type, Arch: r.node.Arch, OSVersion: "sim", RuntimeVersion: "sim-1", BootTime: r.boot}, nil
}

func (r *simRuntime) List(context.Context) ([]Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Container, 0, len(r.cs))
	for _, c := range r.cs {
		out = append(out, c.Container)
	}
	return out, nil
}

func (r *simRuntime) Inspect(_ context.Context, id string) (Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cs[id]
	if c == nil {
		return Container{}, fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	return c.Container, nil
}

func (r *simRuntime) Create(_ context.Context, spec ContainerSpec) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := string(spec.Service.Spec.Image.Ref)
	id := r.id(spec.Labels[LabelTaskID] + "/" + spec.Labels[LabelRevision])
	if r.node.Type != "linux" {
		id = spec.Name // the embedded real-time OS names containers by name
	}
	for _, c := range r.cs {
		if c.Name == spec.Name {
			return "", fmt.Errorf("the name %s is already in use by container %s", spec.Name, c.ID)
		}
	}
	r.cs[id] = &simContainer{ref: ref, Container: Container{
		ID: id, Name: spec.Name, Labels: spec.Labels, State: edgev1alpha1.ContainerCreated,
		Image: ref, ImageID: "sha256:" + hash(ref)[:24], CreatedAt: r.o.Clock.Now().Truncate(time.Second),
	}}
	return id, nil
}

func (r *simRuntime) Start(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cs[id]
	if c == nil {
		return fmt.Errorf("container %s: %w", id, ErrNotFound)
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
			c.stats = Stats{
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

func (r *simRuntime) Stop(_ context.Context, id string, _ time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cs[id]
	if c == nil {
		return fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	c.State = edgev1alpha1.ContainerExited
	return nil
}

func (r *simRuntime) Remove(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cs[id] == nil {
		return fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	delete(r.cs, id)
	return nil
}

// Stats lets the figures wander, and restarts a container of a crashing
// image at every sample.
func (r *simRuntime) Stats(_ context.Context, id string) (Stats, error) {
	r.mu.Lock()
	c := r.cs[id]
	if c == nil || c.State != edgev1alpha1.ContainerRunning || c.stats.CPU == nil {
		r.mu.Unlock()
		return Stats{}, fmt.Errorf("container %s is not running", id)
	}
	st := &c.stats
	total := 0.0
	for i := range st.CPU.Cores {
		st.CPU.Cores[i] = round1(clamp(st.CPU.Cores[i]+r.rnd.NormFloat64()*5, 0, 100))
		total += st.CPU.Cores[i]
	}
	st.CPU.Total = round1(total / float64(len(st.CPU.Cores)))
	st.Memory.Usage = int64(clamp(float64(st.Memory.Usage)+r.rnd.NormFloat64()*4e6, 4<<20, float64(st.Memory.Limit)))
	st.Memory.MaxUsage = max(st.Memory.MaxUsage, st.Memory.Usage)
	st.Size.Usage = min(st.Size.Limit, st.Size.Usage+int64(r.rnd.IntN(1<<16)))
	crashed := r.o.CrashImages != nil && r.o.CrashImages.MatchString(c.ref)
	if crashed {
		c.RestartCount++
		c.StartedAt = r.o.Clock.Now().Truncate(time.Second)
	}
	out := Stats{CPU: st.CPU.DeepCopy(), Memory: st.Memory.DeepCopy(), Size: st.Size.DeepCopy()}
	r.mu.Unlock()
	if crashed {
		r.notify(id)
	}
	return out, nil
}

func (r *simRuntime) Events(context.Context) <-chan string { return r.events }

func (r *simRuntime) notify(id string) {
	select {
	case r.events <- id:
	default:
	}
}

func (r *simRuntime) id(seed string) string { return hash(r.node.Name + "/" + seed)[:12] }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func clamp(v, lo, hi float64) float64 { return min(hi, max(lo, v)) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
