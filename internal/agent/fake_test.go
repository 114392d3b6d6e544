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
	"errors"
	"fmt"
	"sync"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// fakeRuntime is an engine whose calls the tests script: a pull of an
// image in gates waits until its gate closes (or ctx ends), sending the
// progress given; calls of images in failPulls fail; stops of containers
// in slowStops wait for their gate. It counts the calls made.
type fakeRuntime struct {
	mu         sync.Mutex
	images     map[string]bool
	containers map[string]*Container
	gates      map[string]chan struct{}
	progress   map[string][]PullProgress
	failPulls  map[string]error
	slowStops  map[string]chan struct{}
	pulls      map[string]int
	// live holds each pull's progress function, for a test to call.
	live map[string]func(PullProgress)
	// listGate, when set, holds every List until it closes; creates
	// counts Create calls.
	listGate chan struct{}
	// pingGate, when set, holds every Ping until it closes or the call's
	// deadline passes: an engine that stopped answering.
	pingGate chan struct{}
	creates  int
	// startGate, when set, makes Start return at once and the container
	// run only once the gate closes, as the simulator starts containers
	// in the background; starts counts Start calls.
	startGate chan struct{}
	starts    int
	// infoFailures is how many Info calls fail before one answers.
	infoFailures int
	// cpu is every running container's CPU figure; below 0, no stats.
	cpu    float64
	events chan string
	next   int
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{images: map[string]bool{}, containers: map[string]*Container{}, gates: map[string]chan struct{}{},
		progress: map[string][]PullProgress{}, failPulls: map[string]error{}, slowStops: map[string]chan struct{}{},
		pulls: map[string]int{}, live: map[string]func(PullProgress){}, events: make(chan string, 1024), cpu: -1}
}

func (f *fakeRuntime) Ping(ctx context.Context) error {
	f.mu.Lock()
	gate := f.pingGate
	f.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hangPings makes every Ping hang (true) or answer (false).
func (f *fakeRuntime) hangPings(hang bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if hang {
		f.pingGate = make(chan struct{})
	} else if f.pingGate != nil {
		close(f.pingGate)
		f.pingGate = nil
	}
}
func (f *fakeRuntime) Info(context.Context) (RuntimeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.infoFailures > 0 {
		f.infoFailures--
		return RuntimeInfo{}, context.DeadlineExceeded
	}
	return RuntimeInfo{Type: "linux", Arch: "amd64", RuntimeVersion: "fake"}, nil
}

func (f *fakeRuntime) List(ctx context.Context) ([]Container, error) {
	f.mu.Lock()
	gate := f.listGate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Container, 0, len(f.containers))
	for _, c := range f.containers {
		out = append(out, *c)
	}
	return out, nil
}

func (f *fakeRuntime) Inspect(_ context.Context, id string) (Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[id]
	if c == nil {
		return Container{}, fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	return *c, nil
}

func (f *fakeRuntime) ImageOf(spec ContainerSpec) (string, error) {
	return string(spec.Spec.Image.Ref), nil
}

func (f *fakeRuntime) HasImage(_ context.Context, image string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.images[image], nil
}

func (f *fakeRuntime) PullImage(ctx context.Context, image string, _ []byte, progress func(PullProgress)) error {
	f.mu.Lock()
	f.pulls[image]++
	f.live[image] = progress
	gate, steps, fail := f.gates[image], f.progress[image], f.failPulls[image]
	f.mu.Unlock()
	for _, p := range steps {
		progress(p)
	}
	if fail != nil {
		return fail
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return fmt.Errorf("pulling image %s failed: %w", image, context.Cause(ctx))
		}
	}
	f.mu.Lock()
	f.images[image] = true
	f.mu.Unlock()
	return nil
}

func (f *fakeRuntime) Create(_ context.Context, spec ContainerSpec) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates++
	image := string(spec.Spec.Image.Ref)
	if !f.images[image] {
		return "", fmt.Errorf("no image %s", image)
	}
	for _, c := range f.containers {
		if c.Name == spec.Name {
			return "", fmt.Errorf("the name %s is in use", spec.Name)
		}
	}
	f.next++
	id := fmt.Sprintf("c%03d", f.next)
	f.containers[id] = &Container{ID: id, Name: spec.Name, Labels: spec.Labels, State: edgev1alpha1.ContainerCreated, Image: image}
	return id, nil
}

func (f *fakeRuntime) Start(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[id]
	if c == nil {
		return ErrNotFound
	}
	f.starts++
	if gate := f.startGate; gate != nil {
		go func() {
			<-gate
			f.mu.Lock()
			defer f.mu.Unlock()
			c.State, c.StartedAt = edgev1alpha1.ContainerRunning, time.Now()
			f.notify(id)
		}()
		return nil
	}
	c.State, c.StartedAt = edgev1alpha1.ContainerRunning, time.Now()
	f.notify(id)
	return nil
}

func (f *fakeRuntime) Stop(ctx context.Context, id string, _ time.Duration) error {
	f.mu.Lock()
	gate := f.slowStops[id]
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.containers[id]; c != nil {
		c.State = edgev1alpha1.ContainerExited
	}
	return nil
}

func (f *fakeRuntime) Remove(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.containers[id] == nil {
		return ErrNotFound
	}
	delete(f.containers, id)
	f.notify(id)
	return nil
}

func (f *fakeRuntime) Stats(context.Context, string) (Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cpu < 0 {
		return Stats{}, errors.New("no stats")
	}
	return Stats{CPU: &edgev1alpha1.CPUUsage{Total: f.cpu}}, nil
}

// setCPU sets the CPU figure every container reports.
func (f *fakeRuntime) setCPU(cpu float64) {
	f.mu.Lock()
	f.cpu = cpu
	f.mu.Unlock()
}
func (f *fakeRuntime) Events(context.Context) <-chan string { return f.events }

// notify sends an event; f.mu is held.
func (f *fakeRuntime) notify(id string) {
	select {
	case f.events <- id:
	default:
	}
}

// byTask returns the containers of a task.
func (f *fakeRuntime) byTask(task string) []Container {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Container
	for _, c := range f.containers {
		if c.Labels[LabelTaskID] == task {
			out = append(out, *c)
		}
	}
	return out
}

func (f *fakeRuntime) pullsOf(image string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pulls[image]
}
