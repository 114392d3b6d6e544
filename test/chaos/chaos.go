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

// Package chaos runs two managers with leader election and a simulated
// agent against a real API server, changes services' specs in a storm, and
// kills the leader (SIGKILL, no release) every few seconds. It then checks
// the deployment log: every spec version the watch delivered is recorded
// exactly once, under contiguous revisions, and everything converges.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
)

// Config sizes a run.
type Config struct {
	// Bin holds the manager and edge-agent binaries.
	Bin string
	// Services are dynamic services of Factor instances over Nodes nodes.
	Services, Factor, Nodes int
	// Changes spec changes are made at Rate per second, round robin.
	Changes int
	Rate    float64
	// KillEvery is how long a leader leads before it is killed while
	// changes are made; the storm goes on past Changes until MinKills
	// kills were made.
	KillEvery time.Duration
	MinKills  int
	// LeaseDuration is the managers' --leader-elect-lease-duration. A
	// leader that cannot renew within two thirds of it exits: on a busy
	// machine a short lease ends leaders that nothing killed.
	LeaseDuration time.Duration
	// Timeout bounds the wait for convergence after the last kill: a
	// ceiling, not a speed the run expects.
	Timeout time.Duration
	// Log receives progress lines.
	Log io.Writer
}

// Result is what a run found.
type Result struct {
	Services, Changes, Kills int
	// Duplicates are versions recorded more than once; Missing are
	// versions the watch delivered that no record holds; Gaps are revision
	// numbers without a record between 1 and the newest.
	Duplicates, Missing, Gaps int
	// Replacements counts the kills whose leader was the replica started
	// in place of the one killed before, not the standby that watched
	// throughout: what it missed before its first list it cannot record.
	Replacements int
	// Converge is the time from the last kill until every service's status
	// names its newest record and every instance runs it.
	Converge time.Duration
}

// Line is the one-line summary a run prints last.
func (r Result) Line() string {
	return fmt.Sprintf("chaos: services=%d changes=%d kills=%d replacements_led=%d duplicates=%d missing=%d gaps=%d converge_s=%.1f",
		r.Services, r.Changes, r.Kills, r.Replacements, r.Duplicates, r.Missing, r.Gaps, r.Converge.Seconds())
}

// Run performs one chaos run.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	res = Result{Services: cfg.Services, Changes: cfg.Changes}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "chaos: "+format+"\n", args...) }
	env, restCfg, c, err := testenv.Start()
	if err != nil {
		return res, err
	}
	ctx, endWatches := context.WithCancel(ctx)
	var viewEnded chan struct{} // the test's own watch, once started
	defer func() {
		if stopErr := testenv.Stop(env, endWatches, viewEnded); err == nil {
			err = stopErr
		}
	}()
	dir, err := os.MkdirTemp("", "edgeplane-chaos")
	if err != nil {
		return res, err
	}
	// The processes' logs outlive a failed run: they say what each
	// replica saw.
	defer func() {
		if err == nil {
			_ = os.RemoveAll(dir)
		} else {
			logf("the managers', the hub's and the agent's logs are kept in %s", dir)
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		return res, err
	}
	for _, ns := range []string{"edgeplane-node-lease", "edgeplane-system"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return res, err
		}
	}

	// What the watch delivers: every image each service was given.
	view, err := cache.New(restCfg, cache.Options{Scheme: testenv.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return res, err
	}
	inf, err := view.GetInformer(ctx, &edgev1alpha1.EdgeService{})
	if err != nil {
		return res, err
	}
	var mu sync.Mutex
	delivered := map[string]map[edgev1alpha1.ImageRef]bool{}
	see := func(o any) {
		if s, ok := o.(*edgev1alpha1.EdgeService); ok {
			mu.Lock()
			defer mu.Unlock()
			if delivered[s.Name] == nil {
				delivered[s.Name] = map[edgev1alpha1.ImageRef]bool{}
			}
			delivered[s.Name][s.Spec.Image.Ref] = true
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }}); err != nil {
		return res, err
	}
	viewEnded = make(chan struct{})
	go func() {
		defer close(viewEnded)
		_ = view.Start(ctx)
	}()
	if !view.WaitForCacheSync(ctx) {
		return res, errors.New("the test's own watch of services did not sync")
	}

	m := &managers{bin: filepath.Join(cfg.Bin, "manager"), dir: dir, kubeconfig: kubeconfig, lease: cfg.LeaseDuration}
	defer m.stop()
	for i := range 2 {
		if err := m.start(ctx, i); err != nil {
			return res, err
		}
	}
	// Nothing changes before both replicas watch and one leads: a version
	// superseded while no replica watched is the one loss the design
	// admits, and a busy machine starts the binaries slowly.
	var seen string
	if err := procs.WaitFor(ctx, "both replicas ready and a leader", 100*time.Millisecond, func() (bool, error) {
		if err := m.restartExited(ctx, logf); err != nil {
			return false, err
		}
		ready0, ready1 := m.ready(ctx, 0), m.ready(ctx, 1)
		_, err := m.leader(ctx)
		seen = fmt.Sprintf("replica 0 ready %v, replica 1 ready %v, leader: %v", ready0, ready1, errOrNone(err))
		return ready0 && ready1 && err == nil, nil
	}); err != nil {
		return res, fmt.Errorf("%w; last seen: %s", err, seen)
	}
	// The devices join an edge hub replica and talk to it alone.
	hub, err := hubs.Start(ctx, c, hubs.Options{Bin: filepath.Join(cfg.Bin, "manager"), Dir: dir, Kubeconfig: kubeconfig, Replicas: 1})
	if err != nil {
		return res, err
	}
	defer hub.Stop()
	for i := range cfg.Nodes {
		name := fmt.Sprintf("edge-linux-%02d", i+1) // as edge-agent --types linux names them
		if err := hub.Join(ctx, hubs.Node(name, nil), hub.URL, filepath.Join(dir, "devices", name)); err != nil {
			return res, err
		}
	}
	agent, err := procs.Start(ctx, dir, "agent", filepath.Join(cfg.Bin, "edge-agent"), "--hub-identities", filepath.Join(dir, "devices"), "--runtime", "sim",
		"--nodes", strconv.Itoa(cfg.Nodes), "--types", "linux", "--renew-interval", "1s", "--metrics-interval", "60s",
		"--tick", "200ms", "--start-delay", "100ms", "--min-report-interval", "200ms")
	if err != nil {
		return res, err
	}
	defer procs.Stop(agent)

	for i := range cfg.Services {
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("chaos-%03d", i)},
			Spec: edgev1alpha1.EdgeServiceSpec{
				DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@0#linux"},
					Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To(int32(cfg.Factor))},
				RevisionHistoryLimit: ptr.To(int32(cfg.Changes + 1)),
			},
		}
		if err := c.Create(ctx, svc); err != nil {
			return res, err
		}
	}
	logf("%d services created, %d changes at %.0f/s, the leader killed once it led %s", cfg.Services, cfg.Changes, cfg.Rate, cfg.KillEvery)

	// The storm, and the killer beside it.
	var kills, changes atomic.Int32
	stormDone := make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
		defer tick.Stop()
		for i := 0; ; i++ {
			if i >= cfg.Changes && int(kills.Load()) >= cfg.MinKills {
				res.Changes = i
				break
			}
			<-tick.C
			key := client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("chaos-%03d", i%cfg.Services)}
			ref := edgev1alpha1.ImageRef(fmt.Sprintf("app@%d#linux", i/cfg.Services+1))
			if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				s := &edgev1alpha1.EdgeService{}
				if err := c.Get(ctx, key, s); err != nil {
					return err
				}
				s.Spec.Image.Ref = ref
				return c.Update(ctx, s)
			}); err != nil {
				stormDone <- fmt.Errorf("change %d, %s to %s: %w", i+1, key.Name, ref, err)
				return
			}
			changes.Add(1)
		}
		stormDone <- nil
	}()
	// The leader is killed once it has led for KillEvery and observed
	// every service as far as it stood when it began leading, and only
	// while the other replica watches: a kill then tests the failover,
	// not the start-up, and each leader gets to record what its watch saw
	// (on a slow machine that takes longer than KillEvery). Leaders
	// killed one after another before any recorded lose the versions only
	// they had seen: the history lives in the replicas' memory
	// (docs/design/0009-every-version-recorded-through-failover.md).
	var lastKill, leadSince time.Time
	var atLead map[string]int64 // each service's generation when the leader began
	lastKilled, leading := -1, -1
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
storm:
	for {
		select {
		case err := <-stormDone:
			if err != nil {
				return res, err
			}
			break storm
		case now := <-poll.C:
			// A replica that exited on its own (a leader that could not
			// renew its lease in time) is started again, as its
			// Deployment would: the storm waits for two replicas.
			if err := m.restartExited(ctx, logf); err != nil {
				return res, err
			}
			i, err := m.leader(ctx)
			if err != nil {
				seen = fmt.Sprintf("no leader: %v", err)
				continue
			}
			if i != leading {
				if atLead, err = generations(ctx, c); err != nil {
					return res, err
				}
				leading, leadSince = i, now
			}
			other := m.ready(ctx, 1-i)
			// The leader has recorded what it saw before it led, the
			// versions its killed predecessor saw with it: a replica
			// started after they were superseded never saw them.
			caught, behind, err := caughtUp(ctx, c, atLead)
			if err != nil {
				return res, err
			}
			seen = fmt.Sprintf("replica %d leads since %s ago, replica %d ready %v, %s", i, now.Sub(leadSince).Round(time.Millisecond), 1-i, other, behind)
			if now.Before(leadSince.Add(cfg.KillEvery)) || !other || !caught {
				continue
			}
			if err := m.kill(ctx, i); err != nil {
				return res, err
			}
			if i == lastKilled {
				res.Replacements++
			}
			lastKilled, lastKill, leading = i, time.Now(), -1
			res.Kills = int(kills.Add(1))
			logf("killed leader %d (kill %d)", i, res.Kills)
		case <-ctx.Done():
			return res, fmt.Errorf("waiting for kill %d of at least %d (%d changes made of %d): %w; last seen: %s",
				kills.Load()+1, cfg.MinKills, changes.Load(), cfg.Changes, ctx.Err(), seen)
		}
	}
	if lastKill.IsZero() {
		lastKill = time.Now()
	}
	logf("%d changes made; waiting for convergence", res.Changes)

	wait, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := procs.WaitFor(wait, "convergence", 200*time.Millisecond, func() (bool, error) {
		done, last, err := converged(ctx, c)
		seen = last
		return done, err
	}); err != nil {
		return res, fmt.Errorf("%w; last seen: %s", err, seen)
	}
	res.Converge = time.Since(lastKill)

	list := &edgev1alpha1.DeployRecordList{}
	if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
		return res, err
	}
	byService := map[string][]edgev1alpha1.DeployRecord{}
	for _, r := range list.Items {
		byService[r.Spec.ServiceName] = append(byService[r.Spec.ServiceName], r)
	}
	mu.Lock()
	defer mu.Unlock()
	for name, want := range delivered {
		recs := byService[name]
		sort.Slice(recs, func(i, j int) bool { return recs[i].Spec.Revision < recs[j].Spec.Revision })
		seen := map[edgev1alpha1.ImageRef]int{}
		for i, r := range recs {
			seen[r.Spec.Image.Ref]++
			if r.Spec.Revision != int64(i+1) {
				res.Gaps++
			}
		}
		for ref, n := range seen {
			if n > 1 {
				res.Duplicates += n - 1
				logf("%s: %s recorded %d times", name, ref, n)
			}
		}
		for ref := range want {
			if seen[ref] == 0 {
				res.Missing++
				logf("%s: %s delivered but not recorded", name, ref)
			}
		}
	}
	return res, nil
}

// generations are the services' generations now.
func generations(ctx context.Context, c client.Client) (map[string]int64, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := c.List(ctx, services, client.InNamespace("default")); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, s := range services.Items {
		out[s.Name] = s.Generation
	}
	return out, nil
}

// caughtUp says whether the leader has observed every service up to its
// generation in gens, and if not, the first service behind.
func caughtUp(ctx context.Context, c client.Client, gens map[string]int64) (bool, string, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := c.List(ctx, services, client.InNamespace("default")); err != nil {
		return false, "", err
	}
	for _, s := range services.Items {
		if s.Status.ObservedGeneration < gens[s.Name] {
			return false, fmt.Sprintf("%s observed at generation %d of %d when it began leading", s.Name, s.Status.ObservedGeneration, gens[s.Name]), nil
		}
	}
	return true, "caught up", nil
}

// converged says whether every service names its newest record, holding
// its current image, and every instance runs that revision; if not, what
// the first service that has not is at.
func converged(ctx context.Context, c client.Client) (bool, string, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := c.List(ctx, services, client.InNamespace("default")); err != nil {
		return false, "", err
	}
	records := &edgev1alpha1.DeployRecordList{}
	if err := c.List(ctx, records, client.InNamespace("default")); err != nil {
		return false, "", err
	}
	newest := map[string]*edgev1alpha1.DeployRecord{}
	for i := range records.Items {
		r := &records.Items[i]
		if n := newest[r.Spec.ServiceName]; n == nil || n.Spec.Revision < r.Spec.Revision {
			newest[r.Spec.ServiceName] = r
		}
	}
	for _, s := range services.Items {
		r := newest[s.Name]
		if r == nil {
			return false, fmt.Sprintf("%s (image %s) has no record", s.Name, s.Spec.Image.Ref), nil
		}
		if r.Spec.Image.Ref != s.Spec.Image.Ref || s.Status.CurrentRecord != r.Name || s.Status.ObservedGeneration != s.Generation {
			return false, fmt.Sprintf("%s: image %s, generation %d; observed generation %d, current record %q; newest record %s holds %s",
				s.Name, s.Spec.Image.Ref, s.Generation, s.Status.ObservedGeneration, s.Status.CurrentRecord, r.Name, r.Spec.Image.Ref), nil
		}
		insts, err := testenv.Instances(ctx, c, s.Namespace, s.Name)
		if err != nil {
			return false, "", err
		}
		if int32(len(insts)) != *s.Spec.Factor {
			return false, fmt.Sprintf("%s has %d instances, wants %d", s.Name, len(insts), *s.Spec.Factor), nil
		}
		for _, inst := range insts {
			if inst.Revision != r.Spec.Revision || inst.DeployStatus != edgev1alpha1.DeploySuccess {
				return false, fmt.Sprintf("%s: instance %s on %s runs revision %d (%s), wants %d (success)",
					s.Name, inst.Name, inst.NodeName, inst.Revision, inst.DeployStatus, r.Spec.Revision), nil
			}
		}
	}
	return true, "", nil
}

func errOrNone(err error) string {
	if err == nil {
		return "found"
	}
	return err.Error()
}

// managers are the two replicas, each with plain-HTTP metrics to tell the
// leader by and probes to tell a replica whose cache has synced. Only
// Run's goroutine uses them.
type managers struct {
	bin, dir, kubeconfig string
	lease                time.Duration
	cmds                 [2]*exec.Cmd
	metrics, probes      [2]string
	names                [2]string
	runs                 int
}

func (m *managers) start(ctx context.Context, i int) error {
	addr, err := testenv.FreeAddr()
	if err != nil {
		return err
	}
	probes, err := testenv.FreeAddr()
	if err != nil {
		return err
	}
	m.runs++
	name := fmt.Sprintf("manager-%d-%d", i, m.runs)
	args := append([]string{"--kubeconfig", m.kubeconfig,
		"--metrics-bind-address", addr, "--metrics-secure=false", "--health-probe-bind-address", probes, "--api-bind-address", "0"},
		testenv.LeaderElectionFlags(m.lease)...)
	cmd, err := procs.Start(ctx, m.dir, name, m.bin, args...)
	if err != nil {
		return err
	}
	m.cmds[i], m.metrics[i], m.probes[i], m.names[i] = cmd, addr, probes, name
	return nil
}

// ready says whether replica i's informers have synced (its /readyz):
// from then on it watches services, leader or not.
func (m *managers) ready(ctx context.Context, i int) bool {
	return testenv.Ready(ctx, m.probes[i])
}

// leader finds the replica that leads.
func (m *managers) leader(ctx context.Context) (int, error) {
	return testenv.Leader(ctx, m.metrics[:])
}

// restartExited starts again each replica whose process exited although
// the run did not kill it: a leader that could not renew its lease within
// the renew deadline exits, as controller-runtime's managers do.
func (m *managers) restartExited(ctx context.Context, logf func(string, ...any)) error {
	for i, cmd := range m.cmds {
		if cmd == nil || !procs.Exited(cmd.Process.Pid) {
			continue
		}
		_ = cmd.Wait()
		logf("replica %d exited on its own (%s; its log is %s.log); starting it again", i, cmd.ProcessState, filepath.Join(m.dir, m.names[i]))
		if err := m.start(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// kill sends SIGKILL to replica i, as a node failure would, and starts a
// replacement at once.
func (m *managers) kill(ctx context.Context, i int) error {
	cmd := m.cmds[i]
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return m.start(ctx, i)
}

func (m *managers) stop() {
	for _, c := range m.cmds {
		if c != nil {
			procs.Stop(c)
		}
	}
}
