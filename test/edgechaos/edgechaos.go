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

// Package edgechaos runs the real manager, one real agent on a real
// container engine and simulated agents against a real API server, changes
// services' specs at a steady rate, and meanwhile cuts the real agent's link
// (a loopback TCP proxy), restarts its engine and SIGKILLs it at random
// moments, most of them in the middle of a container's replacement. It then
// checks that every change was recorded once and reached the engine, and
// that the engine holds exactly one container per instance and no other.
package edgechaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	mobyclient "github.com/moby/moby/client"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/enginecheck"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
	"github.com/edgeplane/edgeplane/test/framework/testregistry"
	"github.com/edgeplane/edgeplane/test/framework/versions"
)

// Config sizes a run.
type Config struct {
	// Bin holds the manager and edge-agent binaries.
	Bin string
	// Engine is the real engine's kind: podman or docker.
	Engine string
	// SimNodes simulated nodes run SimServices dynamic services of two
	// instances; the real node runs RealServices static services.
	SimNodes, SimServices, RealServices int
	// Changes are made at Rate per second for Duration, round robin over
	// every service.
	Rate     float64
	Duration time.Duration
	// Faults on the real node during the changes: link cuts, engine
	// restarts, agent kills, and stalls of its registry link (every
	// replacement there pulls, pullPolicy Always, and a stalled pull is cut
	// after the agent's progress deadline). Simulated nodes' pulls are slow
	// (SimPullTime) throughout.
	Cuts, EngineRestarts, Kills, Stalls int
	SimPullTime                         time.Duration
	// HubKills SIGKILL one of the two edge hub replicas every device
	// reaches (the real agent through its link), starting it again a
	// moment later.
	HubKills int
	// BadImages of the changes, spread over the run, also give a
	// simulated service an image whose containers fail to start. Every
	// service rolls out in waves (a canary first, then one node at a
	// time), the simulated ones with autoRollback, so each such rollout
	// stops at its canary and returns to the last configuration that ran
	// everywhere.
	BadImages int
	// Timeout bounds each wait for convergence.
	Timeout time.Duration
	Seed    uint64
	Log     io.Writer
}

// Result is what a run found.
type Result struct {
	Changes, Cuts, EngineRestarts, AgentKills, Stalls, HubKills int
	// BadImages are the changes to a failing image; Rollbacks the
	// rollbacks the manager made (its RolledBack events).
	BadImages, Rollbacks int
	// Duplicates are versions of a service's spec recorded twice and
	// instances with more than one container; Orphans are containers of
	// no current instance, or of an old revision; LostChanges are
	// versions the watch delivered (the run's changes and the manager's
	// rollbacks) that no record holds, and real containers not running
	// their service's last change.
	Duplicates, Orphans, LostChanges int
	// Offline are the nodes the manager declared offline during the
	// faults: every fault is shorter than the grace period, and a device
	// whose hub replica dies moves to the other.
	Offline int
	// Converge is the time from the end of the last fault until every
	// instance succeeded at its service's newest revision.
	Converge time.Duration
}

// Line is the one-line summary a run prints last.
func (r Result) Line() string {
	return fmt.Sprintf("edge-chaos: cuts=%d engine_restarts=%d agent_kills=%d pull_stalls=%d hub_kills=%d bad_images=%d rollbacks=%d duplicates=%d orphans=%d lost_changes=%d offline=%d converge_s=%.1f",
		r.Cuts, r.EngineRestarts, r.AgentKills, r.Stalls, r.HubKills, r.BadImages, r.Rollbacks, r.Duplicates, r.Orphans, r.LostChanges, r.Offline, r.Converge.Seconds())
}

// Failed says whether the run found anything duplicated, orphaned or lost.
func (r Result) Failed() bool { return r.Duplicates+r.Orphans+r.LostChanges+r.Offline > 0 }

const realNode = "edge-real-01"

// stallCut is the real agent's --image-pull-progress-deadline.
const stallCut = 3 * time.Second

// registrySecret holds the credentials of the real node's registry.
const registrySecret = "chaos-registry"

// startRegistry serves the real node's image from a registry on loopback,
// through a link the run can stall, with the credentials in a Secret.
func (r *run) startRegistry(ctx context.Context) error {
	var err error
	if r.registry, err = testregistry.Start(map[string]string{"robot": "chaos"}, r.dir); err != nil {
		return err
	}
	if err := r.registry.PushBox("edgeplane/box", "1", "robot", "chaos"); err != nil {
		return err
	}
	if r.link, err = testenv.StartProxy(r.registry.Host); err != nil {
		return err
	}
	auths := fmt.Sprintf(`{"auths":{%q:{"username":"robot","password":"chaos"}}}`, r.link.Addr())
	return r.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: registrySecret},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(auths)}})
}

// run is one chaos run's moving parts.
type run struct {
	cfg    Config
	logf   func(format string, args ...any)
	c      client.Client
	eng    *mobyclient.Client
	engine *testenv.Engine
	// proxy is the real agent's link to the hub, which the run cuts.
	proxy *testenv.Proxy
	hubs  *hubs.Hubs
	// registry serves the real node's image through link, which stalls.
	registry *testregistry.Registry
	link     *testenv.Proxy
	dir      string

	// agentMu guards the real agent's process across kills and restarts.
	agentMu   sync.Mutex
	agentCmd  *exec.Cmd
	agentArgs []string
	agentRuns int
	// realChanged is signalled after each change of a real node's
	// service, so that a kill lands in the replacement that follows.
	realChanged chan struct{}

	delivered *versions.Delivered
}

// Run performs one chaos run.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	r := &run{cfg: cfg, realChanged: make(chan struct{}, 1)}
	r.logf = func(format string, args ...any) { fmt.Fprintf(cfg.Log, "edge-chaos: "+format+"\n", args...) }
	env, restCfg, c, err := testenv.Start()
	if err != nil {
		return res, err
	}
	ctx, endWatches := context.WithCancel(ctx)
	defer func() {
		if stopErr := testenv.Stop(env, endWatches, r.delivered.Ended()); err == nil {
			err = stopErr
		}
	}()
	r.c = c
	if r.dir, err = os.MkdirTemp("", "edgeplane-edge-chaos"); err != nil {
		return res, err
	}
	defer func() { _ = os.RemoveAll(r.dir) }()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-node-lease"}}); err != nil {
		return res, err
	}
	kubeconfig := filepath.Join(r.dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		return res, err
	}
	// Every device joins the edge hub and talks to it alone; the real
	// agent's link to it runs through a proxy the run cuts.
	if r.hubs, err = hubs.Start(ctx, c, hubs.Options{Bin: filepath.Join(cfg.Bin, "manager"), Dir: r.dir, Kubeconfig: kubeconfig, Replicas: 2}); err != nil {
		return res, err
	}
	defer r.hubs.Stop()
	if r.proxy, err = testenv.StartProxy(r.hubs.Front.Addr()); err != nil {
		return res, err
	}
	defer r.proxy.Close()
	if err := r.hubs.Join(ctx, hubs.Node(realNode, nil), "https://"+r.proxy.Addr(), filepath.Join(r.dir, "state")); err != nil {
		return res, err
	}
	for i := range cfg.SimNodes {
		name := fmt.Sprintf("sim-linux-%02d", i+1) // as edge-agent --node-prefix sim names them
		if err := r.hubs.Join(ctx, hubs.Node(name, map[string]string{"pool": "sim"}), r.hubs.URL, filepath.Join(r.dir, "devices", name)); err != nil {
			return res, err
		}
	}
	if r.engine, err = testenv.StartEngine(cfg.Engine); err != nil {
		return res, err
	}
	defer func() { _ = r.engine.Stop() }()
	if r.eng, err = mobyclient.New(mobyclient.WithHost(r.engine.Host)); err != nil {
		return res, err
	}
	defer func() { _ = r.eng.Close() }()
	// Every version of each service's spec the watch delivers must be
	// recorded once. A rollback restores an earlier CHANGE value as a new
	// version, so versions, not values, are what is counted.
	if r.delivered, err = versions.Watch(ctx, restCfg, func(s *edgev1alpha1.EdgeService) string { return "CHANGE=" + change(s) }); err != nil {
		return res, err
	}
	if err := r.startRegistry(ctx); err != nil {
		return res, err
	}
	defer func() { _ = r.registry.Close() }()
	defer r.link.Close()

	manager, err := procs.Start(ctx, r.dir, "manager", filepath.Join(cfg.Bin, "manager"), "--kubeconfig", kubeconfig,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--api-bind-address", "0")
	if err != nil {
		return res, err
	}
	defer procs.Stop(manager)
	sim, err := procs.Start(ctx, r.dir, "sim", filepath.Join(cfg.Bin, "edge-agent"), "--hub-identities", filepath.Join(r.dir, "devices"), "--runtime", "sim",
		"--nodes", strconv.Itoa(cfg.SimNodes), "--node-prefix", "sim", "--labels", "pool=sim", "--renew-interval", "2s",
		"--start-delay", "200ms", "--min-report-interval", "200ms", "--metrics-interval", "30s",
		"--slow-pulls", "^box@", "--pull-time", cfg.SimPullTime.String(), "--fail-images", "^"+badImage+"@")
	if err != nil {
		return res, err
	}
	defer procs.Stop(sim)
	r.agentArgs = []string{"--runtime", "docker",
		"--runtime-endpoint", r.engine.Host, "--image-registry", "edgeplane.local", "--state-dir", filepath.Join(r.dir, "state"),
		"--renew-interval", "2s", "--runtime-probe-interval", "1s", "--stop-timeout", "2s", "--resync-interval", "5s",
		"--metrics-interval", "30s", "--min-report-interval", "200ms", "--image-pull-progress-deadline", stallCut.String()}
	if err := r.startAgent(ctx); err != nil {
		return res, err
	}
	defer r.stopAgent()

	if err := r.createServices(ctx); err != nil {
		return res, err
	}
	if err := r.waitConverged(ctx, "the first rollout"); err != nil {
		return res, err
	}
	r.logf("%d services running (%d on the real %s node); %.0f changes/s for %s with %d link cuts, %d engine restarts, %d agent kills, %d registry stalls and %d hub replica kills",
		cfg.RealServices+cfg.SimServices, cfg.RealServices, cfg.Engine, cfg.Rate, cfg.Duration, cfg.Cuts, cfg.EngineRestarts, cfg.Kills, cfg.Stalls, cfg.HubKills)

	stormStart := time.Now().Truncate(time.Second)
	lastFault, err := r.storm(ctx, &res)
	if err != nil {
		return res, err
	}
	offline, err := r.offline(ctx, stormStart)
	if err != nil {
		return res, err
	}
	if res.Offline = len(offline); res.Offline > 0 {
		r.logf("nodes declared offline during the faults: %s", strings.Join(offline, "; "))
	}
	r.logf("%d changes made, every fault over; waiting for convergence", res.Changes)
	if err := r.waitConverged(ctx, "convergence"); err != nil {
		return res, err
	}
	res.Converge = time.Since(lastFault)
	return res, r.check(ctx, &res)
}

func (r *run) waitConverged(ctx context.Context, what string) error {
	wait, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	return procs.WaitFor(wait, what, 200*time.Millisecond, func() (bool, error) { return r.converged(ctx) })
}

// services are every service's name, the real node's first.
func (r *run) services() []string {
	var out []string
	for i := range r.cfg.RealServices {
		out = append(out, fmt.Sprintf("real-%02d", i))
	}
	for i := range r.cfg.SimServices {
		out = append(out, fmt.Sprintf("sim-%02d", i))
	}
	return out
}

func (r *run) createServices(ctx context.Context) error {
	for _, name := range r.services() {
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: edgev1alpha1.EdgeServiceSpec{
				DeploySpec: edgev1alpha1.DeploySpec{
					// Every replacement pulls: slowly on simulated nodes, from
					// the registry through a link that stalls on the real one.
					Image:  edgev1alpha1.ImageSpec{Ref: "box@1#linux", PullPolicy: edgev1alpha1.PullAlways},
					Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"CHANGE=0"}, Network: "none"}},
				},
				RevisionHistoryLimit: ptr.To(int32(1000)),
				// In waves: a canary, then one node at a time.
				Strategy: edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate,
					RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Canary: ptr.To(intstr.FromInt32(1))}},
			},
		}
		if strings.HasPrefix(name, "real-") {
			svc.Spec.Policy, svc.Spec.Nodes = edgev1alpha1.PolicyStatic, []string{realNode}
			svc.Spec.Image.Path = r.link.Addr() + "/edgeplane/box"
			svc.Spec.Image.PullSecretRefs = []edgev1alpha1.LocalSecretReference{{Name: registrySecret}}
		} else {
			svc.Spec.Policy, svc.Spec.Factor = edgev1alpha1.PolicyDynamic, ptr.To[int32](2)
			// Some of their changes fail (badChanges): a failed canary
			// returns to what ran everywhere. The real node's faults
			// are transient, and its rollouts wait them out.
			svc.Spec.Strategy.AutoRollback = true
			svc.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "sim"}}
		}
		if err := r.c.Create(ctx, svc); err != nil {
			return err
		}
	}
	return nil
}

// change is a service's CHANGE value.
func change(s *edgev1alpha1.EdgeService) string {
	if s.Spec.Config == nil || s.Spec.Config.Linux == nil {
		return ""
	}
	for _, e := range s.Spec.Config.Linux.Env {
		if v, ok := strings.CutPrefix(e, "CHANGE="); ok {
			return v
		}
	}
	return ""
}

// storm changes the services at the configured rate while the faults run
// at random moments; it returns when both are over, with the time the last
// fault ended.
func (r *run) storm(ctx context.Context, res *Result) (time.Time, error) {
	names := r.services()
	rnd := rand.New(rand.NewPCG(r.cfg.Seed, 20))
	// Each kind of fault at its own random moments over the run, one at
	// a time: a cut lasts 2-6 s, an engine stays down 1-4 s, a killed
	// agent is back within a second.
	type plan struct {
		at  []time.Duration
		run func() error
	}
	moments := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(rnd.Int64N(int64(r.cfg.Duration * 9 / 10)))
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	hold := func(lo, hi time.Duration) time.Duration { return lo + rand.N(hi-lo) }
	var counts sync.Mutex
	plans := []plan{
		{moments(r.cfg.Cuts), func() error {
			r.proxy.Cut()
			time.Sleep(hold(2*time.Second, 6*time.Second))
			r.proxy.Restore()
			counts.Lock()
			res.Cuts++
			counts.Unlock()
			return nil
		}},
		{moments(r.cfg.EngineRestarts), func() error {
			if err := r.engine.Down(); err != nil {
				return err
			}
			time.Sleep(hold(time.Second, 4*time.Second))
			if err := r.engine.Up(); err != nil {
				return err
			}
			counts.Lock()
			res.EngineRestarts++
			counts.Unlock()
			return nil
		}},
		{moments(r.cfg.Stalls), func() error {
			// Longer than the agent's progress deadline: a pull under way
			// is cut, fails, and is tried again after its back-off.
			r.link.SetRate(-1)
			time.Sleep(hold(2*stallCut, 3*stallCut))
			r.link.SetRate(0)
			counts.Lock()
			res.Stalls++
			counts.Unlock()
			return nil
		}},
		{moments(r.cfg.HubKills), func() error {
			counts.Lock()
			i := res.HubKills % len(r.hubs.Addrs)
			counts.Unlock()
			if err := r.hubs.Restart(ctx, i, hold(time.Second, 3*time.Second)); err != nil {
				return err
			}
			counts.Lock()
			res.HubKills++
			counts.Unlock()
			return nil
		}},
		{moments(r.cfg.Kills), func() error {
			// In the middle of the replacement that follows a change of
			// one of the real node's services, most of the time.
			select {
			case <-r.realChanged:
			case <-time.After(5 * time.Second):
			}
			time.Sleep(hold(0, 800*time.Millisecond))
			if err := r.killAgent(ctx); err != nil {
				return err
			}
			counts.Lock()
			res.AgentKills++
			counts.Unlock()
			return nil
		}},
	}
	start := time.Now()
	var lastMu sync.Mutex
	last := start
	errs := make(chan error, len(plans)+1)
	var wg sync.WaitGroup
	for _, p := range plans {
		wg.Go(func() {
			for _, at := range p.at {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(start.Add(at))):
				}
				if err := p.run(); err != nil {
					errs <- err
					return
				}
				lastMu.Lock()
				last = time.Now()
				lastMu.Unlock()
			}
		})
	}
	bad := r.badChanges(names)
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.Rate))
	defer tick.Stop()
	for i := 1; time.Since(start) < r.cfg.Duration; i++ {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case err := <-errs:
			return last, err
		case <-tick.C:
		}
		name := names[(i-1)%len(names)]
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s := &edgev1alpha1.EdgeService{}
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, s); err != nil {
				return err
			}
			s.Spec.Config.Linux.Env = []string{"CHANGE=" + strconv.Itoa(i)}
			if bad[i] {
				s.Spec.Image.Ref = edgev1alpha1.ImageRef(fmt.Sprintf("%s@%d#linux", badImage, i))
			}
			return r.c.Update(ctx, s)
		}); err != nil {
			return last, err
		}
		res.Changes++
		if bad[i] {
			res.BadImages++
		}
		if strings.HasPrefix(name, "real-") {
			select {
			case r.realChanged <- struct{}{}:
			default:
			}
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		return last, err
	default:
	}
	lastMu.Lock()
	defer lastMu.Unlock()
	if last.Before(start) || last.Equal(start) {
		last = time.Now()
	}
	return last, nil
}

// badImage names the images whose containers fail to start on the
// simulated nodes.
const badImage = "bad"

// badChanges picks the changes that also give a simulated service a
// failing image: BadImages of them, spread evenly over the run's changes.
func (r *run) badChanges(names []string) map[int]bool {
	out := map[int]bool{}
	planned := int(r.cfg.Rate * r.cfg.Duration.Seconds())
	for j := range r.cfg.BadImages {
		i := max(1, (j+1)*planned/(r.cfg.BadImages+1)) // changes count from 1
		for i < planned && !strings.HasPrefix(names[(i-1)%len(names)], "sim-") {
			i++
		}
		out[i] = true
	}
	return out
}

func (r *run) startAgent(ctx context.Context) error {
	r.agentMu.Lock()
	defer r.agentMu.Unlock()
	r.agentRuns++
	cmd, err := procs.Start(ctx, r.dir, fmt.Sprintf("agent-%d", r.agentRuns), filepath.Join(r.cfg.Bin, "edge-agent"), r.agentArgs...)
	if err != nil {
		return err
	}
	r.agentCmd = cmd
	return nil
}

// killAgent SIGKILLs the real agent, as a power cut or the OOM killer
// would, and starts it again a moment later, as systemd does.
func (r *run) killAgent(ctx context.Context) error {
	r.agentMu.Lock()
	_ = r.agentCmd.Process.Kill()
	_ = r.agentCmd.Wait()
	r.agentMu.Unlock()
	time.Sleep(rand.N(time.Second))
	return r.startAgent(ctx)
}

func (r *run) stopAgent() {
	r.agentMu.Lock()
	defer r.agentMu.Unlock()
	procs.Stop(r.agentCmd)
}

// converged says whether every service's newest record holds its current
// spec and every instance succeeded at it, and the real node is online
// with its engine answering.
func (r *run) converged(ctx context.Context) (bool, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.c.List(ctx, services, client.InNamespace("default")); err != nil {
		return false, err
	}
	if len(services.Items) != r.cfg.RealServices+r.cfg.SimServices {
		return false, nil
	}
	for _, s := range services.Items {
		insts, err := testenv.Instances(ctx, r.c, s.Namespace, s.Name)
		if err != nil {
			return false, err
		}
		if s.Status.ObservedGeneration != s.Generation || len(insts) == 0 {
			return false, nil
		}
		for _, inst := range insts {
			if inst.Revision != s.Status.Revision || inst.DeployStatus != edgev1alpha1.DeploySuccess {
				return false, nil
			}
		}
	}
	n := &edgev1alpha1.EdgeNode{}
	if err := r.c.Get(ctx, client.ObjectKey{Name: realNode}, n); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return n.Status.Status == edgev1alpha1.NodeOnline && meta.IsStatusConditionTrue(n.Status.Conditions, edgev1alpha1.ConditionRuntimeReady), nil
}

// check counts duplicates, orphans and lost changes once converged.
func (r *run) check(ctx context.Context, res *Result) error {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.c.List(ctx, services, client.InNamespace("default")); err != nil {
		return err
	}
	lost, dups, notes, err := r.delivered.Check(ctx, r.c, "default")
	if err != nil {
		return err
	}
	res.LostChanges, res.Duplicates = res.LostChanges+lost, res.Duplicates+dups
	for _, n := range notes {
		r.logf("%s", n)
	}
	events := &eventsv1.EventList{}
	if err := r.c.List(ctx, events, client.InNamespace("default")); err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.Reason == edgev1alpha1.ReasonRolledBack && strings.HasPrefix(e.Note, "Rolled back") {
			res.Rollbacks++
		}
	}

	// The real engine: one container per instance, at its revision,
	// running the service's last change; nothing else of the node's.
	placed := &edgev1alpha1.NodeAssignment{}
	if err := r.c.Get(ctx, client.ObjectKey{Name: realNode}, placed); client.IgnoreNotFound(err) != nil {
		return err
	}
	want := enginecheck.Wanted(placed, services.Items, func(s *edgev1alpha1.EdgeService) string { return "CHANGE=" + change(s) })
	rep, err := enginecheck.Check(ctx, r.eng, realNode, want)
	res.Orphans += rep.Orphans
	res.Duplicates += rep.Duplicates
	res.LostChanges += rep.Lost
	for _, n := range rep.Notes {
		r.logf("%s", n)
	}
	return err
}
