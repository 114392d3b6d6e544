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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	mobyclient "github.com/moby/moby/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
	"github.com/edgeplane/edgeplane/test/framework/managers"
)

// run is one soak run's moving parts.
type run struct {
	cfg  Config
	logf func(format string, args ...any)
	// logs holds every process's log (Out/logs); tmp the kubeconfig and
	// the devices' identities.
	logs, tmp string
	env       *envtest.Environment
	restCfg   *rest.Config
	c         client.Client
	view      cache.Cache
	ledger    *Ledger
	managers  *managers.Replicas
	// replica is the read replica's facade; its metrics at replicaMetrics.
	replica                    *exec.Cmd
	replicaURL, replicaMetrics string
	hubs                       *hubs.Hubs
	hubMetrics                 []string
	// link is the cut nodes' way to the hub, which the run cuts.
	link *testenv.Proxy
	// agent plays Nodes nodes, cutAgent CutNodes more; each serves Go's
	// profiles at its pprof address (the agent has no metrics endpoint).
	agent, cutAgent       *exec.Cmd
	agentPprof, cutPprof  string
	apiserverPID, etcdPID int
	// realAgent is the real-engine node's agent (nil without one), eng
	// its engine's API.
	realAgent *exec.Cmd
	realPprof string
	eng       *mobyclient.Client
	// began is when the churn began: minute 0 of every figure.
	began time.Time

	mu sync.Mutex
	// res is the Result being filled; its counters are written under mu.
	res Result
	// offline are the nodes seen leaving online during the churn.
	offline []string
	// churning is set while the churn runs: only then do offline nodes
	// and rollbacks count.
	churning bool

	stops []func()
}

// Long-lived services are soak-NNN; the nodes are named as edge-agent
// names the simulator's: <prefix>-linux-NN.
const (
	namespace     = "default"
	leasesNS      = "edgeplane-node-lease"
	nodePrefix    = "edge"
	cutNodePrefix = "cut"
	// badImage names the images whose containers fail on simulated nodes.
	badImage = "bad"
)

func serviceName(i int) string { return fmt.Sprintf("soak-%03d", i) }

// onStop runs f when the run ends, the last registered first.
func (r *run) onStop(f func()) { r.stops = append(r.stops, f) }

func (r *run) stop() {
	// A run ended during a fault ends it first: every process stops
	// against an API server that answers.
	if r.apiserverPID != 0 {
		_ = procs.Resume(r.apiserverPID)
	}
	for i := len(r.stops) - 1; i >= 0; i-- {
		r.stops[i]()
	}
}

// start brings the whole system up: the control plane, the managers and
// the read replica, the hub replicas, every node joined and online, and
// the long-lived services running.
func (r *run) start(ctx context.Context) error {
	var err error
	if r.tmp, err = os.MkdirTemp("", "edgeplane-soak"); err != nil {
		return err
	}
	r.onStop(func() { _ = os.RemoveAll(r.tmp) })
	r.logs = filepath.Join(r.cfg.Out, "logs")
	if err := os.RemoveAll(r.logs); err != nil {
		return err
	}
	if err := os.MkdirAll(r.logs, 0o755); err != nil {
		return err
	}
	r.env, r.restCfg, r.c, err = testenv.Start(func(env *envtest.Environment) error {
		env.ControlPlane.GetAPIServer().Configure().Set("event-ttl", r.cfg.EventTTL.String())
		return nil
	})
	if err != nil {
		return err
	}
	r.onStop(func() { _ = r.env.Stop() })
	if r.apiserverPID, err = testenv.APIServerPID(r.restCfg); err != nil {
		return err
	}
	if r.etcdPID, err = testenv.EtcdPID(r.env); err != nil {
		return err
	}
	kubeconfig := filepath.Join(r.tmp, "kubeconfig")
	if err := testenv.WriteKubeconfig(r.env, kubeconfig); err != nil {
		return err
	}
	for _, ns := range []string{leasesNS, hubs.Namespace} {
		if err := r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	// The run's own watch, before anything is created: it must deliver
	// every version of every service.
	r.ledger = NewLedger()
	if err := r.watch(ctx); err != nil {
		return err
	}

	manager := filepath.Join(r.cfg.Bin, "manager")
	if r.managers, err = managers.New(ctx, r.logf, manager, r.logs, kubeconfig, r.cfg.LeaseDuration); err != nil {
		return err
	}
	r.onStop(r.managers.Stop)
	for i := range 2 {
		if err := r.managers.Start(i); err != nil {
			return err
		}
	}
	if err := r.managers.WaitReady(ctx, r.cfg.Timeout); err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	replicaAddr, err := testenv.FreeAddr()
	if err != nil {
		return err
	}
	if r.replicaMetrics, err = testenv.FreeAddr(); err != nil {
		return err
	}
	if r.replica, err = procs.Start(ctx, r.logs, "replica", manager, "--kubeconfig", kubeconfig, "--controllers=false",
		"--metrics-bind-address", r.replicaMetrics, "--metrics-secure=false", "--health-probe-bind-address", "0", "--api-bind-address", replicaAddr); err != nil {
		return err
	}
	r.onStop(func() { procs.Stop(r.replica) })
	r.replicaURL = "http://" + replicaAddr

	if err := r.startHubs(ctx, manager, kubeconfig); err != nil {
		return err
	}
	if err := r.startRealNode(ctx); err != nil {
		return fmt.Errorf("the real-engine node: %w", err)
	}
	if err := r.startAgents(ctx); err != nil {
		return err
	}
	nodes := r.cfg.Nodes + r.cfg.CutNodes
	if r.res.RealNode {
		nodes++
	}
	if err := procs.WaitFor(wait, "every node online", time.Second, func() (bool, error) {
		list := &edgev1alpha1.EdgeNodeList{}
		if err := r.view.List(ctx, list); err != nil {
			return false, err
		}
		online := 0
		for _, n := range list.Items {
			if n.Status.Status == edgev1alpha1.NodeOnline {
				online++
			}
		}
		return online == nodes, nil
	}); err != nil {
		return err
	}
	if err := procs.WaitFor(wait, "the read replica's facade synced", 200*time.Millisecond, func() (bool, error) {
		_, err := r.facade(ctx, r.replicaURL, "GET", "/api/v1/node?pageSize=1", nil, nil)
		return err == nil, nil
	}); err != nil {
		return err
	}
	if err := r.createServices(ctx); err != nil {
		return err
	}
	return procs.WaitFor(wait, "every long-lived service running", time.Second, func() (bool, error) {
		n, err := r.unsettled(ctx)
		return n == 0, err
	})
}

// startHubs runs two hub replicas behind a balancer in this process,
// each with plain-HTTP metrics, and the proxy the cut nodes reach the
// balancer through.
func (r *run) startHubs(ctx context.Context, manager, kubeconfig string) error {
	for range 2 {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return err
		}
		r.hubMetrics = append(r.hubMetrics, addr)
	}
	var err error
	r.hubs, err = hubs.Start(ctx, r.c, hubs.Options{Bin: manager, Dir: r.logs, Kubeconfig: kubeconfig, Replicas: 2,
		Args: func(i int) []string {
			return []string{"--metrics-bind-address", r.hubMetrics[i], "--metrics-secure=false"}
		}})
	if err != nil {
		return err
	}
	r.onStop(r.hubs.Stop)
	if err := procs.WaitFor(ctx, "every hub replica serving", 200*time.Millisecond, func() (bool, error) {
		return r.hubs.Identity(0) != "" && r.hubs.Identity(1) != "", nil
	}); err != nil {
		return err
	}
	if r.link, err = testenv.StartProxy(strings.TrimPrefix(r.hubs.URL, "https://")); err != nil {
		return err
	}
	r.onStop(r.link.Close)
	return nil
}

// startAgents joins every node as kubectl edge node add and edge-agent
// join do, the cut nodes through the link, and starts the two simulators.
func (r *run) startAgents(ctx context.Context) error {
	join := func(prefix string, n int, hub, ids string) error {
		return testenv.Parallel(n, func(i int) error {
			name := fmt.Sprintf("%s-linux-%02d", prefix, i+1)
			return r.hubs.Join(ctx, hubs.Node(name, nil), hub, filepath.Join(ids, name))
		})
	}
	ids, cutIDs := filepath.Join(r.tmp, "identities"), filepath.Join(r.tmp, "cut-identities")
	if err := join(nodePrefix, r.cfg.Nodes, r.hubs.URL, ids); err != nil {
		return err
	}
	if err := join(cutNodePrefix, r.cfg.CutNodes, "https://"+r.link.Addr(), cutIDs); err != nil {
		return err
	}
	r.logf("%d nodes joined through the hub, %d more through the link the run cuts", r.cfg.Nodes, r.cfg.CutNodes)
	start := func(name, prefix string, n int, ids string) (*exec.Cmd, string, error) {
		pprof, err := testenv.FreeAddr()
		if err != nil {
			return nil, "", err
		}
		// As test/perf/scale runs it: reports at most every 2 s, containers
		// running a second after they are created.
		cmd, err := procs.Start(ctx, r.logs, name, filepath.Join(r.cfg.Bin, "edge-agent"), "--hub-identities", ids, "--runtime", "sim",
			"--nodes", strconv.Itoa(n), "--node-prefix", prefix, "--types", "linux", "--renew-interval", "10s", "--metrics-interval", "60s",
			"--tick", "1s", "--min-report-interval", "2s", "--start-delay", "1s", "--fail-images", "^"+badImage+"@", "--pprof-bind-address", pprof)
		return cmd, pprof, err
	}
	var err error
	if r.agent, r.agentPprof, err = start("agent", nodePrefix, r.cfg.Nodes, ids); err != nil {
		return err
	}
	r.onStop(func() { procs.Stop(r.agent) })
	if r.cutAgent, r.cutPprof, err = start("agent-cut", cutNodePrefix, r.cfg.CutNodes, cutIDs); err != nil {
		return err
	}
	// Resumed first, should the run end while it is stopped.
	r.onStop(func() { _ = procs.Resume(r.cutAgent.Process.Pid); procs.Stop(r.cutAgent) })
	return nil
}

// createServices creates the long-lived services: two instances each,
// every other one in waves (a canary, then a node at a time) with
// autoRollback, and history limits from 3 to 10, so that pruning is
// exercised at several depths.
func (r *run) createServices(ctx context.Context) error {
	return testenv.Parallel(r.cfg.Services, func(i int) error {
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: serviceName(i)},
			Spec: edgev1alpha1.EdgeServiceSpec{
				DeploySpec: edgev1alpha1.DeploySpec{Path: "/soak", Image: edgev1alpha1.ImageSpec{Ref: "app@1#linux"},
					Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"CHANGE=0"}}},
					Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](2)},
				RevisionHistoryLimit: ptr.To(int32(3 + i%8)),
			},
		}
		if Rolling(i) {
			svc.Spec.Strategy = edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate, AutoRollback: true,
				RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Canary: ptr.To(intstr.FromInt32(1))}}
		}
		return r.c.Create(ctx, svc)
	})
}

// unsettled counts the services (long-lived and short-lived) not
// Settled, as the API server holds them.
func (r *run) unsettled(ctx context.Context) (int, error) {
	list := &edgev1alpha1.EdgeServiceList{}
	if err := r.c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if !Settled(&list.Items[i]) {
			n++
		}
	}
	return n, nil
}
