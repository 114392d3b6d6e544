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

// Package upgrade upgrades a running fleet from the previous release to
// this tree while a rollout is under way, in the order docs/install.md
// gives: the CRDs, the manager replicas and the edge hub replicas, then
// the agents. The previous release is built from its commit in git
// history (hack/releases.tsv). Simulated nodes and one real node (an
// agent on Podman) run three services; one of them rolls out to a new
// image in waves, one node at a time, while the upgrade runs, and
// another is changed at every step. Some simulated nodes keep the
// previous agent to the end: the version skew docs/install.md promises.
//
// It then checks what an operator would: every version of every spec
// recorded exactly once, no container restarted at a revision it already
// ran, no node declared offline, the rollout finished, and the facade
// answering throughout (its errors and p99).
package upgrade

import (
	"context"
	"fmt"
	"io"
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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/enginecheck"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
	"github.com/edgeplane/edgeplane/test/framework/managers"
	"github.com/edgeplane/edgeplane/test/framework/versions"
)

// Version is one release's binaries (manager, edge-agent) and CRDs.
type Version struct {
	Name, Bin, CRDs string
}

// Config sizes a run.
type Config struct {
	From, To Version
	// Engine is the real node's engine (podman or docker); empty runs
	// simulated nodes only.
	Engine string
	// SimNodes simulated nodes are upgraded with the control plane;
	// LagNodes keep the previous agent to the end.
	SimNodes, LagNodes int
	// SimPullTime is how long a simulated node pulls the rollout's image:
	// each wave of the rollout waits that long at least.
	SimPullTime time.Duration
	// Timeout bounds each wait for the fleet to settle: a ceiling, not a
	// speed the run expects.
	Timeout time.Duration
	Log     io.Writer
}

// Result is what a run found.
type Result struct {
	From, To             string
	Nodes, Services      int
	RealNode             bool
	Changes              int
	Steps, StepsInFlight int
	// Lost are spec versions the watch delivered that no record holds;
	// Duplicates versions recorded more than once.
	Lost, Duplicates int
	// Restarts are containers started again at a revision their instance
	// already ran, on the real node and the nodes whose agent did not
	// restart (a simulated node's containers live in its agent's memory).
	Restarts int
	// Offline are the nodes declared offline at any moment.
	Offline int
	// RealMismatches are the real engine's containers that are not one
	// per instance at its current spec, at the end.
	RealMismatches int
	// SkewNodes are the nodes that ran the previous agent to the end,
	// online and at the rollout's revision.
	SkewNodes int
	// Upgrade is the time from the first step's start to the last's end;
	// Rollout from the rollout's change until every instance ran it.
	Upgrade, Rollout time.Duration
	// Facade requests sent throughout, those that failed, and the p99 of
	// those answered (0 with too few answers to read one from).
	FacadeRequests, FacadeErrors int
	FacadeP99                    time.Duration
}

// Line is the one-line summary a run prints last.
func (r Result) Line() string {
	return fmt.Sprintf("upgrade: from=%s to=%s nodes=%d real_node=%v services=%d changes=%d steps=%d steps_in_flight=%d lost=%d duplicates=%d restarts=%d offline=%d real_mismatches=%d skew_nodes=%d upgrade_s=%.1f rollout_s=%.1f facade_requests=%d facade_errors=%d facade_p99_ms=%.1f",
		r.From, r.To, r.Nodes, r.RealNode, r.Services, r.Changes, r.Steps, r.StepsInFlight, r.Lost, r.Duplicates, r.Restarts, r.Offline, r.RealMismatches, r.SkewNodes,
		r.Upgrade.Seconds(), r.Rollout.Seconds(), r.FacadeRequests, r.FacadeErrors, float64(r.FacadeP99.Microseconds())/1000)
}

// Failed says whether the upgrade lost, duplicated, restarted or
// offlined anything, left the rollout behind it, or the facade failed.
func (r Result) Failed() bool {
	return r.Lost+r.Duplicates+r.Restarts+r.Offline+r.RealMismatches+r.FacadeErrors > 0 ||
		r.StepsInFlight != r.Steps || r.SkewNodes == 0
}

const (
	realNode = "edge-real-01"
	// The services: steady runs everywhere and never changes; web runs
	// everywhere and rolls out in waves during the upgrade; conf runs on
	// the simulated nodes and changes at every step.
	steady, web, conf = "steady", "web", "conf"
	// lease is the managers' leader election lease: kube-controller-
	// manager's default, which a busy machine does not trip.
	lease = 15 * time.Second
)

type run struct {
	cfg  Config
	logf func(format string, args ...any)
	c    client.Client
	dir  string
	// nodes are every node's name; sim and lag the simulated ones by
	// group.
	nodes, sim, lag []string
	mgrs            *managers.Replicas
	hubs            *hubs.Hubs
	engine          *testenv.Engine
	eng             *mobyclient.Client

	delivered *versions.Delivered

	mu     sync.Mutex
	agents map[string]*exec.Cmd // agent group -> its process
}

// Run performs one upgrade run.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	res = Result{From: cfg.From.Name, To: cfg.To.Name, Services: 3, RealNode: cfg.Engine != ""}
	// The run's watch and processes end with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{cfg: cfg, agents: map[string]*exec.Cmd{}}
	r.logf = func(format string, args ...any) { fmt.Fprintf(cfg.Log, "upgrade: "+format+"\n", args...) }
	env, restCfg, c, err := testenv.Start(func(e *envtest.Environment) error {
		e.CRDDirectoryPaths = []string{cfg.From.CRDs}
		return nil
	})
	if err != nil {
		return res, err
	}
	defer func() {
		if stopErr := testenv.Stop(env, cancel, r.delivered.Ended()); err == nil {
			err = stopErr
		}
	}()
	r.c = c
	if r.dir, err = os.MkdirTemp("", "edgeplane-upgrade"); err != nil {
		return res, err
	}
	// The processes' logs outlive a failed run: they say what each saw.
	defer func() {
		if err == nil && !res.Failed() {
			_ = os.RemoveAll(r.dir)
		} else {
			r.logf("the managers', the hubs' and the agents' logs are kept in %s", r.dir)
		}
	}()
	defer r.stop()
	if err := r.startFleet(ctx, env, restCfg); err != nil {
		return res, err
	}
	res.Nodes = len(r.nodes)
	if err := r.createServices(ctx); err != nil {
		return res, err
	}
	if err := r.waitSettled(ctx, "the fleet running the previous release"); err != nil {
		return res, err
	}

	// From here on, every node's containers and state are sampled and
	// the facade is read without pause.
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	s := newSampler(r.c, r.nodes)
	var wg sync.WaitGroup
	wg.Go(func() { s.run(watchCtx) })
	f := newFacadeReader(r.mgrs.Facade)
	wg.Go(func() { f.run(watchCtx) })

	r.logf("%d nodes (%d keep %s's agent%s) run %s; rolling %s out to a new image in waves while upgrading to %s",
		len(r.nodes), len(r.lag), cfg.From.Name, map[bool]string{true: ", one on " + cfg.Engine}[r.engine != nil], cfg.From.Name, web, cfg.To.Name)
	rolloutStart := time.Now()
	if err := r.update(ctx, web, func(s *edgev1alpha1.EdgeService) { s.Spec.Image.Ref = "box@2#linux" }); err != nil {
		return res, err
	}
	res.Changes++
	upgradeStart := time.Now()
	for i, st := range r.steps(s, f) {
		inFlight, seen, err := r.rolloutInFlight(ctx)
		if err != nil {
			return res, err
		}
		res.Steps++
		if inFlight {
			res.StepsInFlight++
		}
		r.logf("step %d, %s (rollout: %s)", i+1, st.name, seen)
		// conf changes at every step, so that a version arrives while
		// each part is being replaced.
		if err := r.update(ctx, conf, func(s *edgev1alpha1.EdgeService) { setChange(s, i+1) }); err != nil {
			return res, err
		}
		res.Changes++
		if err := st.do(ctx); err != nil {
			return res, fmt.Errorf("step %s: %w", st.name, err)
		}
	}
	res.Upgrade = time.Since(upgradeStart)
	if err := r.waitSettled(ctx, "the rollout finishing on "+cfg.To.Name); err != nil {
		return res, err
	}
	res.Rollout = time.Since(rolloutStart)
	stopWatching()
	wg.Wait()

	res.Restarts, res.Offline = s.restarts(r.logf), s.offline(r.logf)
	res.FacadeRequests, res.FacadeErrors, res.FacadeP99 = f.figures(r.logf)
	if err := r.checkRecords(ctx, &res); err != nil {
		return res, err
	}
	if err := r.checkSkew(ctx, &res); err != nil {
		return res, err
	}
	return res, r.checkEngine(ctx, &res)
}

// startFleet starts the previous release's control plane (two managers
// with leader election, two hub replicas) and agents, and joins the
// nodes.
func (r *run) startFleet(ctx context.Context, env *envtest.Environment, cfg *rest.Config) error {
	for _, ns := range []string{"edgeplane-node-lease", "edgeplane-system"} {
		if err := r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	kubeconfig := filepath.Join(r.dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		return err
	}
	var err error
	if r.delivered, err = versions.Watch(ctx, cfg, func(s *edgev1alpha1.EdgeService) string {
		return string(s.Spec.Image.Ref) + " " + s.Spec.Config.Linux.Env[0]
	}); err != nil {
		return err
	}
	old := filepath.Join(r.cfg.From.Bin, "manager")
	if r.mgrs, err = managers.New(ctx, r.logf, old, r.dir, kubeconfig, lease); err != nil {
		return err
	}
	for i := range 2 {
		if err := r.mgrs.Start(i); err != nil {
			return err
		}
	}
	if err := r.mgrs.WaitReady(ctx, r.cfg.Timeout); err != nil {
		return err
	}
	if r.hubs, err = hubs.Start(ctx, r.c, hubs.Options{Bin: old, Dir: r.dir, Kubeconfig: kubeconfig, Replicas: 2}); err != nil {
		return err
	}
	join := func(group string, n int) ([]string, error) {
		var names []string
		for i := range n {
			name := fmt.Sprintf("%s-linux-%02d", group, i+1) // as edge-agent --node-prefix names them
			if err := r.hubs.Join(ctx, hubs.Node(name, nil), r.hubs.URL, filepath.Join(r.dir, group, name)); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
		return names, nil
	}
	if r.sim, err = join("sim", r.cfg.SimNodes); err != nil {
		return err
	}
	if r.lag, err = join("lag", r.cfg.LagNodes); err != nil {
		return err
	}
	r.nodes = append(append([]string{}, r.sim...), r.lag...)
	for _, g := range []struct {
		name string
		n    int
	}{{"sim", r.cfg.SimNodes}, {"lag", r.cfg.LagNodes}} {
		if g.n > 0 {
			if err := r.startAgent(ctx, g.name, r.cfg.From); err != nil {
				return err
			}
		}
	}
	if r.cfg.Engine == "" {
		return nil
	}
	if err := r.hubs.Join(ctx, hubs.Node(realNode, nil), r.hubs.URL, filepath.Join(r.dir, "real")); err != nil {
		return err
	}
	r.nodes = append(r.nodes, realNode)
	if r.engine, err = testenv.StartEngine(r.cfg.Engine); err != nil {
		return err
	}
	if r.eng, err = mobyclient.New(mobyclient.WithHost(r.engine.Host)); err != nil {
		return err
	}
	return r.startAgent(ctx, "real", r.cfg.From)
}

// startAgent starts the agent of a group of nodes (sim, lag or real) of
// version v. Each keeps its state directory across versions, as a device
// keeps /var/lib/edgeplane.
func (r *run) startAgent(ctx context.Context, group string, v Version) error {
	args := []string{"--renew-interval", "2s", "--min-report-interval", "200ms", "--metrics-interval", "30s"}
	if group == "real" {
		args = append(args, "--runtime", "docker", "--runtime-endpoint", r.engine.Host, "--image-registry", "edgeplane.local",
			"--state-dir", filepath.Join(r.dir, "real"), "--runtime-probe-interval", "1s", "--stop-timeout", "2s", "--resync-interval", "5s")
	} else {
		n := r.cfg.SimNodes
		if group == "lag" {
			n = r.cfg.LagNodes
		}
		args = append(args, "--runtime", "sim", "--hub-identities", filepath.Join(r.dir, group), "--nodes", strconv.Itoa(n),
			"--node-prefix", group, "--start-delay", "200ms", "--slow-pulls", "^box@2#", "--pull-time", r.cfg.SimPullTime.String())
	}
	cmd, err := procs.Start(ctx, r.dir, group+"-agent-"+v.Name, filepath.Join(v.Bin, "edge-agent"), args...)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents[group] = cmd
	return nil
}

// replaceAgent stops a group's agent as systemd stops it and starts v's.
func (r *run) replaceAgent(ctx context.Context, group string, v Version) error {
	r.mu.Lock()
	cmd := r.agents[group]
	r.mu.Unlock()
	procs.Stop(cmd)
	return r.startAgent(ctx, group, v)
}

// stop stops whatever of the fleet was started: the agents, the hub
// replicas, the managers, the engine.
func (r *run) stop() {
	r.mu.Lock()
	for _, cmd := range r.agents {
		procs.Stop(cmd)
	}
	r.mu.Unlock()
	if r.hubs != nil {
		r.hubs.Stop()
	}
	if r.mgrs != nil {
		r.mgrs.Stop()
	}
	if r.eng != nil {
		_ = r.eng.Close()
	}
	if r.engine != nil {
		_ = r.engine.Stop()
	}
}

// createServices creates the three services.
func (r *run) createServices(ctx context.Context) error {
	everywhere := append([]string{}, r.nodes...)
	for _, name := range []string{steady, web, conf} {
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: edgev1alpha1.EdgeServiceSpec{
				DeploySpec: edgev1alpha1.DeploySpec{
					Policy: edgev1alpha1.PolicyStatic,
					Image:  edgev1alpha1.ImageSpec{Ref: "box@1#linux"},
					Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"CHANGE=0"}, Network: "none"}},
				},
				Nodes:                everywhere,
				RevisionHistoryLimit: ptr.To(int32(100)),
			},
		}
		switch name {
		case web:
			svc.Spec.Strategy = edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate,
				RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
		case conf:
			svc.Spec.Nodes = append(append([]string{}, r.sim...), r.lag...)
		}
		if err := r.c.Create(ctx, svc); err != nil {
			return err
		}
	}
	return nil
}

// update changes a service's spec.
func (r *run) update(ctx context.Context, name string, change func(*edgev1alpha1.EdgeService)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &edgev1alpha1.EdgeService{}
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, s); err != nil {
			return err
		}
		change(s)
		return r.c.Update(ctx, s)
	})
}

// setChange sets conf's CHANGE variable.
func setChange(s *edgev1alpha1.EdgeService, k int) {
	s.Spec.Config.Linux.Env = []string{"CHANGE=" + strconv.Itoa(k)}
}

// step is one step of the upgrade.
type step struct {
	name string
	do   func(context.Context) error
}

// steps are the upgrade in docs/install.md's order. A replica leaves the
// facade's endpoints before it is stopped and joins them once ready, as
// a Service's endpoints follow a pod's termination and readiness.
func (r *run) steps(s *sampler, f *facadeReader) []step {
	to := r.cfg.To
	out := []step{{"the CRDs", r.applyCRDs}}
	for i := range 2 {
		out = append(out, step{fmt.Sprintf("manager replica %d", i), func(ctx context.Context) error {
			f.serve(i, false)
			if err := r.mgrs.Replace(i, filepath.Join(to.Bin, "manager"), 30*time.Second); err != nil {
				return err
			}
			if err := r.mgrs.WaitReady(ctx, r.cfg.Timeout); err != nil {
				return err
			}
			f.serve(i, true)
			return nil
		}})
	}
	for i := range 2 {
		out = append(out, step{fmt.Sprintf("hub replica %d", i), func(ctx context.Context) error {
			return r.hubs.Replace(ctx, i, filepath.Join(to.Bin, "manager"))
		}})
	}
	if len(r.sim) > 0 {
		out = append(out, step{"the simulated nodes' agents", func(ctx context.Context) error {
			// Their containers live in the agent's memory and end with it:
			// from here on they are new containers, not restarts.
			s.forget(r.sim)
			return r.replaceAgent(ctx, "sim", to)
		}})
	}
	if r.engine != nil {
		out = append(out, step{"the real node's agent", func(ctx context.Context) error { return r.replaceAgent(ctx, "real", to) }})
	}
	return out
}

// applyCRDs applies the new release's CRDs server-side, as install.md's
// upgrade does with kubectl apply --server-side, and waits until each is
// established.
func (r *run) applyCRDs(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(r.cfg.To.CRDs, "*.yaml"))
	if err != nil {
		return err
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		objs, err := testenv.DecodeYAML(data)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for _, u := range objs {
			if err := r.c.Patch(ctx, u, client.Apply, client.FieldOwner("edgeplane-upgrade"), client.ForceOwnership); err != nil {
				return fmt.Errorf("applying %s: %w", u.GetName(), err)
			}
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(u.GroupVersionKind())
			if err := procs.WaitFor(ctx, u.GetName()+" established", 100*time.Millisecond, func() (bool, error) {
				if err := r.c.Get(ctx, client.ObjectKey{Name: u.GetName()}, crd); err != nil {
					return false, err
				}
				conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
				for _, c := range conds {
					if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// rolloutInFlight says whether web's rollout is under way: its newest
// revision is not yet the one every instance ran.
func (r *run) rolloutInFlight(ctx context.Context) (bool, string, error) {
	s := &edgev1alpha1.EdgeService{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: web}, s); err != nil {
		return false, "", err
	}
	insts, err := testenv.Instances(ctx, r.c, s.Namespace, s.Name)
	if err != nil {
		return false, "", err
	}
	moved := 0
	for _, inst := range insts {
		if inst.Revision == s.Status.Revision && inst.DeployStatus == edgev1alpha1.DeploySuccess {
			moved++
		}
	}
	inFlight := s.Generation > 1 && (s.Status.ObservedGeneration != s.Generation || s.Status.DeployedRevision < s.Status.Revision)
	return inFlight, fmt.Sprintf("%d of %d instances at revision %d, deployed revision %d", moved, len(insts), s.Status.Revision, s.Status.DeployedRevision), nil
}

// waitSettled waits until every service's newest revision runs on each
// of its instances and every node is online.
func (r *run) waitSettled(ctx context.Context, what string) error {
	wait, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var seen string
	if err := procs.WaitFor(wait, what, 200*time.Millisecond, func() (bool, error) {
		var err error
		seen, err = r.unsettled(ctx)
		return seen == "", err
	}); err != nil {
		return fmt.Errorf("%w; last seen: %s", err, seen)
	}
	return nil
}

// unsettled says what is not settled yet, empty when all is.
func (r *run) unsettled(ctx context.Context) (string, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.c.List(ctx, services, client.InNamespace("default")); err != nil {
		return "", err
	}
	for _, s := range services.Items {
		if s.Status.ObservedGeneration != s.Generation || s.Status.DeployedRevision != s.Status.Revision {
			return fmt.Sprintf("%s: generation %d observed %d, revision %d deployed %d", s.Name, s.Generation, s.Status.ObservedGeneration, s.Status.Revision, s.Status.DeployedRevision), nil
		}
		insts, err := testenv.Instances(ctx, r.c, s.Namespace, s.Name)
		if err != nil {
			return "", err
		}
		if len(insts) != len(s.Spec.Nodes) {
			return fmt.Sprintf("%s has %d instances of %d", s.Name, len(insts), len(s.Spec.Nodes)), nil
		}
		for _, inst := range insts {
			if inst.Revision != s.Status.Revision || inst.DeployStatus != edgev1alpha1.DeploySuccess {
				return fmt.Sprintf("%s on %s: revision %d (%s), wants %d", s.Name, inst.NodeName, inst.Revision, inst.DeployStatus, s.Status.Revision), nil
			}
		}
	}
	nodes := &edgev1alpha1.EdgeNodeList{}
	if err := r.c.List(ctx, nodes); err != nil {
		return "", err
	}
	for _, n := range nodes.Items {
		if n.Status.Status != edgev1alpha1.NodeOnline {
			return fmt.Sprintf("node %s is %q", n.Name, n.Status.Status), nil
		}
		if n.Name == realNode && !meta.IsStatusConditionTrue(n.Status.Conditions, edgev1alpha1.ConditionRuntimeReady) {
			return "the real node's engine is not ready", nil
		}
	}
	return "", nil
}

// checkRecords counts the delivered versions no record holds and those
// recorded more than once.
func (r *run) checkRecords(ctx context.Context, res *Result) error {
	var notes []string
	var err error
	res.Lost, res.Duplicates, notes, err = r.delivered.Check(ctx, r.c, "default")
	for _, n := range notes {
		r.logf("%s", n)
	}
	return err
}

// checkSkew counts the nodes whose previous agent served them to the end
// against the new control plane, and checks that every other node runs
// the new agent.
func (r *run) checkSkew(ctx context.Context, res *Result) error {
	old, cur := "edge-agent/"+r.cfg.From.Name, "edge-agent/"+r.cfg.To.Name
	lag := map[string]bool{}
	for _, n := range r.lag {
		lag[n] = true
	}
	s := &edgev1alpha1.EdgeService{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: web}, s); err != nil {
		return err
	}
	insts, err := testenv.Instances(ctx, r.c, "default", web)
	if err != nil {
		return err
	}
	at := map[string]bool{}
	for _, inst := range insts {
		at[inst.NodeName] = inst.Revision == s.Status.Revision && inst.DeployStatus == edgev1alpha1.DeploySuccess
	}
	var wrong []string
	for _, name := range r.nodes {
		n := &edgev1alpha1.EdgeNode{}
		if err := r.c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			return err
		}
		got := ""
		if n.Status.NodeInfo != nil {
			got = n.Status.NodeInfo.AgentVersion
		}
		want := cur
		if lag[name] {
			want = old
		}
		if got != want {
			wrong = append(wrong, fmt.Sprintf("%s reports %q, want %q", name, got, want))
			continue
		}
		if lag[name] && n.Status.Status == edgev1alpha1.NodeOnline && at[name] {
			res.SkewNodes++
		}
	}
	if len(wrong) > 0 {
		sort.Strings(wrong)
		return fmt.Errorf("agent versions after the upgrade: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// checkEngine compares the real engine's containers with the real
// node's instances: one each, at its service's current spec.
func (r *run) checkEngine(ctx context.Context, res *Result) error {
	if r.engine == nil {
		return nil
	}
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.c.List(ctx, services, client.InNamespace("default")); err != nil {
		return err
	}
	placed := &edgev1alpha1.NodeAssignment{}
	if err := r.c.Get(ctx, client.ObjectKey{Name: realNode}, placed); err != nil {
		return err
	}
	want := enginecheck.Wanted(placed, services.Items, func(s *edgev1alpha1.EdgeService) string { return s.Spec.Config.Linux.Env[0] })
	rep, err := enginecheck.Check(ctx, r.eng, realNode, want)
	res.RealMismatches = rep.Mismatches()
	for _, n := range rep.Notes {
		r.logf("%s", n)
	}
	return err
}
