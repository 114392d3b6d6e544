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

// Package autonomy_test proves the edge agent's autonomy against a real
// API server: the agent's link is cut by a TCP proxy the test controls, its
// engine made unreachable by a runtime wrapper the test controls, and the
// agent stopped and started again on the same engine and state directory.
package autonomy_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/e2e"
)

var (
	ctx context.Context
	sys *e2e.System
)

func TestAutonomy(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	testenv.RunSpecs(t, "Edge autonomy suite")
}

var _ = BeforeSuite(func() {
	o := controllers.DefaultOptions()
	o.NodeGracePeriod, o.RescheduleGrace, o.DeletionTimeout = 2*time.Second, 3*time.Second, 20*time.Second
	ctx, sys = e2e.StartHubSuite(o)
})

// engine is a runtime the test can take down: while down every call fails
// as a dead engine socket does, and the event stream closes. What it holds
// outlives the agents that drive it, as a real engine does.
type engine struct {
	agent.Runtime
	down atomic.Bool
	mu   sync.Mutex
	// calls counts the calls made while down, besides probes; lists
	// counts every list, each the start of an agent's pass that converges.
	calls, lists atomic.Int64
}

var errEngineDown = errors.New("dial unix /run/podman/podman.sock: connect: connection refused")

func (e *engine) err() error {
	if e.down.Load() {
		return errEngineDown
	}
	return nil
}

func (e *engine) failing() error {
	if err := e.err(); err != nil {
		e.calls.Add(1)
		return err
	}
	return nil
}

func (e *engine) Ping(ctx context.Context) error {
	if err := e.err(); err != nil {
		return err
	}
	return e.Runtime.Ping(ctx)
}

func (e *engine) Info(ctx context.Context) (agent.RuntimeInfo, error) {
	if err := e.failing(); err != nil {
		return agent.RuntimeInfo{}, err
	}
	return e.Runtime.Info(ctx)
}

func (e *engine) List(ctx context.Context) ([]agent.Container, error) {
	e.lists.Add(1)
	if err := e.failing(); err != nil {
		return nil, err
	}
	return e.Runtime.List(ctx)
}

func (e *engine) Inspect(ctx context.Context, id string) (agent.Container, error) {
	if err := e.failing(); err != nil {
		return agent.Container{}, err
	}
	return e.Runtime.Inspect(ctx, id)
}

func (e *engine) Create(ctx context.Context, spec agent.ContainerSpec) (string, error) {
	if err := e.failing(); err != nil {
		return "", err
	}
	return e.Runtime.Create(ctx, spec)
}

func (e *engine) Start(ctx context.Context, id string) error {
	if err := e.failing(); err != nil {
		return err
	}
	return e.Runtime.Start(ctx, id)
}

func (e *engine) Stop(ctx context.Context, id string, timeout time.Duration) error {
	if err := e.failing(); err != nil {
		return err
	}
	return e.Runtime.Stop(ctx, id, timeout)
}

func (e *engine) Remove(ctx context.Context, id string) error {
	if err := e.failing(); err != nil {
		return err
	}
	return e.Runtime.Remove(ctx, id)
}

func (e *engine) Stats(ctx context.Context, id string) (agent.Stats, error) {
	if err := e.failing(); err != nil {
		return agent.Stats{}, err
	}
	return e.Runtime.Stats(ctx, id)
}

// Events forwards the engine's stream until the engine goes down.
func (e *engine) Events(ctx context.Context) <-chan string {
	out := make(chan string)
	if e.failing() != nil {
		close(out)
		return out
	}
	in := e.Runtime.Events(ctx)
	go func() {
		defer close(out)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if e.down.Load() {
					return
				}
			case id, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- id:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// byTask is what the engine holds of edgeplane's containers, by task.
func (e *engine) byTask() map[string][]agent.Container {
	GinkgoHelper()
	list, err := e.Runtime.List(ctx)
	Expect(err).NotTo(HaveOccurred())
	out := map[string][]agent.Container{}
	for _, c := range list {
		if t := c.TaskID(); t != "" {
			out[t] = append(out[t], c)
		}
	}
	return out
}
