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

// Package engine holds the specs of the real-engine suites: the real
// manager and an edge agent with the Docker Engine API runtime against
// envtest and a real engine, Podman's API service (engine/podman) or Docker
// Engine (engine/docker), each started by hack/engine.sh; every claim is
// checked through the facade and through the engine itself. Each engine
// is a suite of its own, so that go test runs them side by side.
package engine

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/docker"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/e2e"
)

var (
	ctx context.Context
	sys *e2e.System
)

// Start starts the suite's control plane and manager: the BeforeSuite of
// each engine's suite. Without an engine (EDGEPLANE_SKIP_ENGINE=1) it
// skips the suite.
func Start() {
	if testenv.EngineSkipped() {
		fmt.Printf("engine suite skipped: %s=1\n", testenv.SkipEngineVar)
		Skip(testenv.SkipEngineVar + "=1: the real container engine suite is skipped")
	}
	o := controllers.DefaultOptions()
	o.NodeGracePeriod, o.DeletionTimeout = grace, 30*time.Second
	ctx, sys = e2e.StartHubSuite(o)
}

// Cleanup removes what the suite built: its AfterSuite.
func Cleanup() {
	if agentDir != "" {
		Expect(os.RemoveAll(agentDir)).To(Succeed())
	}
}

// node is one edge node whose agent runs --runtime=docker on a private
// engine of one kind.
type node struct {
	kind, name string
	engine     *testenv.Engine
	// eng is the test's own client of the engine, to check what it runs
	// and to act on it behind edgeplane's back.
	eng *client.Client
	// stopAgent stops the running agent; lists counts its lists of the
	// engine, each the start of a pass that converges.
	stopAgent func()
	lists     *atomic.Int32
	// The agent joined the edge hub and reaches it through proxy, which a
	// test can cut; it keeps its state file and its hub identity in
	// stateDir across restarts.
	proxy    *testenv.Proxy
	cfg      *rest.Config
	stateDir string
}

// start starts the engine and the node's agent.
func (n *node) start() {
	GinkgoHelper()
	var err error
	n.engine, err = testenv.StartEngine(n.kind)
	Expect(err).NotTo(HaveOccurred(), "this suite needs a real container engine; set %s=1 to skip it", testenv.SkipEngineVar)
	n.eng, err = client.New(client.WithHost(n.engine.Host))
	Expect(err).NotTo(HaveOccurred())
	hub, err := url.Parse(sys.HubURL)
	Expect(err).NotTo(HaveOccurred())
	n.proxy, err = testenv.StartProxy(hub.Host)
	Expect(err).NotTo(HaveOccurred())
	n.stateDir, err = os.MkdirTemp("", "edgeplane-agent-state.")
	Expect(err).NotTo(HaveOccurred())
	id := sys.Join(ctx, n.name, nil, filepath.Join(n.stateDir, "hub"))
	n.cfg, err = id.RESTConfig()
	Expect(err).NotTo(HaveOccurred())
	n.cfg.Host = "https://" + n.proxy.Addr() // the hub's certificate names 127.0.0.1
	n.startAgent()
}

func (n *node) stop() {
	if n.stopAgent != nil {
		n.stopAgent()
	}
	if n.proxy != nil {
		n.proxy.Close()
	}
	if n.stateDir != "" {
		Expect(os.RemoveAll(n.stateDir)).To(Succeed())
	}
	if n.engine != nil {
		Expect(n.engine.Stop()).To(Succeed())
	}
}

// agentProcess starts the edge-agent binary for the node, as the systemd
// unit does, with the same flags as startAgent's: a process the test can
// SIGKILL. It runs as the node the device joined, whose identity is in
// its state directory, reaching the hub at the address it joined.
func (n *node) agentProcess() *exec.Cmd {
	GinkgoHelper()
	bin := agentBinary()
	cmd := exec.CommandContext(ctx, bin, "--runtime", "docker",
		"--runtime-endpoint", n.engine.Host, "--image-registry", "edgeplane.local", "--state-dir", n.stateDir,
		"--renew-interval", "1s", "--metrics-interval", "1s", "--tick", "100ms", "--resync-interval", "5s", "--stop-timeout", "2s",
		"--runtime-probe-interval", "1s", "--image-pull-progress-deadline", pullDeadline.String())
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	return cmd
}

// pullDeadline is the agents' --image-pull-progress-deadline: short, so
// that a stalled pull is cut within the suite's patience.
const pullDeadline = 3 * time.Second

// grace is the nodes' grace period. The agent beats every second, and
// one process holds the agent, the hub and the manager, so a stall of
// that process is a missed beat: 5 s left room for a 4 s stall, too
// little for make test's suites side by side on a 2-core machine (#52).
// 15 missed beats is no busy moment.
const grace = 15 * time.Second

// slowPull is how long the pull spec's slow pull takes: 20 s, over the
// node's grace, or EDGEPLANE_SLOW_PULL (make slow-pull: 2m).
var slowPull = func() time.Duration {
	d, err := time.ParseDuration(os.Getenv("EDGEPLANE_SLOW_PULL"))
	if err != nil || d < grace+5*time.Second {
		return grace + 5*time.Second
	}
	return d
}()

// agentDir holds the agent binary, removed after the suite.
var agentDir string

// agentBinary builds cmd/edge-agent once.
var agentBinary = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "edgeplane-engine-agent.")
	Expect(err).NotTo(HaveOccurred())
	agentDir = dir
	build := exec.Command("go", "build", "-o", dir, "./cmd/edge-agent")
	build.Dir = testenv.RepoRoot()
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the agent: %s", out)
	return filepath.Join(dir, "edge-agent")
})

// startAgent runs an edge agent with the Docker Engine API runtime for the
// node, as `edge-agent --runtime=docker` does.
func (n *node) startAgent() {
	GinkgoHelper()
	o := agent.DefaultOptions()
	o.Log = logf.Log.WithName("agent").WithValues("engine", n.kind)
	o.Nodes = []agent.Node{{Name: n.name, Type: "linux", Arch: goruntime.GOARCH, Address: "127.0.0.1:7200"}}
	o.RenewInterval, o.MetricsInterval, o.Tick, o.ResyncInterval, o.StopTimeout = time.Second, time.Second, 100*time.Millisecond, 5*time.Second, 2*time.Second
	o.RuntimeProbeInterval, o.StateDir, o.ImagePullProgressDeadline = time.Second, n.stateDir, pullDeadline
	rt, err := docker.New(docker.Options{Endpoint: n.engine.Host, Registry: "edgeplane.local"})
	Expect(err).NotTo(HaveOccurred())
	counted := &listCounter{Runtime: rt}
	n.lists = &counted.lists
	o.NewRuntime = func(agent.Node, int) (agent.Runtime, error) { return counted, nil }
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = rt.Close() }()
		_ = agent.Run(actx, n.cfg, o)
	}()
	n.stopAgent = func() { stop(); <-done }
}

// listCounter counts a runtime's lists: the node loop lists the engine
// when it starts (and at each resync), then converges, so a count above
// zero says a started agent has begun acting on what the engine holds.
type listCounter struct {
	agent.Runtime
	lists atomic.Int32
}

func (r *listCounter) List(ctx context.Context) ([]agent.Container, error) {
	r.lists.Add(1)
	return r.Runtime.List(ctx)
}

// listed waits until the agent started last has listed the engine.
func (n *node) listed() {
	GinkgoHelper()
	Eventually(n.lists.Load).Should(BeNumerically(">", 0), "the agent lists the engine")
}
