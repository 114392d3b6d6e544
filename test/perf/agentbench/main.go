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

// Command agentbench measures the agent on real container engines next to
// the simulator (make bench-agent): the real manager and real agents, one
// with --runtime=docker on each private engine (Podman, Docker Engine) and
// one with --runtime=sim.
//
//   - spec change to running: a service's configuration is changed N times;
//     each time, how long until the controller shows the instance
//     successful at the new revision, which needs the agent to have
//     replaced the container and seen the new one running;
//   - the first engine's agent's RSS and CPU while it runs M real containers.
//
// Each part's figures are printed for reading, then as lines of key=value
// (agentbench: per runtime, agentbench-pull:, agentbench-agent:), the
// tables of docs/figures/bench-agent.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

func main() {
	changes := flag.Int("changes", 20, "Configuration changes timed on each runtime.")
	containers := flag.Int("containers", 20, "Real containers the docker agent runs while its RSS and CPU are measured.")
	window := flag.Duration("window", time.Minute, "How long the agent's CPU is measured.")
	bin := flag.String("bin", "bin", "Directory of the manager and edge-agent binaries.")
	keep := flag.Bool("keep", false, "Keep the processes' logs, and print where.")
	engineList := flag.String("engines", "podman,docker", "Engines (hack/engine.sh kinds) an agent with --runtime=docker runs on; the first also runs the containers.")
	images := flag.Int("images", 20, "Images pulled at once on the first engine's node, one of them from a link that stalls (0 skips this).")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	// A run takes about three minutes; one that hangs stops by itself.
	ctx, stop := context.WithTimeout(ctx, 15*time.Minute)
	defer stop()
	if err := run(ctx, strings.Split(*engineList, ","), *changes, *containers, *images, *window, *bin, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "agentbench:", err)
		os.Exit(1)
	}
}

// renew is the agents' --renew-interval.
const renew = 5 * time.Second

func run(ctx context.Context, engines []string, changes, containers, images int, window time.Duration, bin string, keep bool) error {
	env, _, c, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	dir, err := os.MkdirTemp("", "edgeplane-agentbench")
	if err != nil {
		return err
	}
	if keep {
		defer fmt.Println("logs in", dir)
	} else {
		defer func() { _ = os.RemoveAll(dir) }()
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-node-lease"}}); err != nil {
		return err
	}

	manager, err := procs.Start(ctx, dir, "manager", filepath.Join(bin, "manager"), "--kubeconfig", kubeconfig,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--api-bind-address", "0")
	if err != nil {
		return err
	}
	defer procs.Stop(manager)
	common := []string{"--kubeconfig", kubeconfig, "--renew-interval", renew.String(), "--stop-timeout", "2s", "--zap-time-encoding", "rfc3339nano", "--zap-log-level", "debug"}
	// The simulator runs a container the moment it is started, so its
	// figure is edgeplane's own share of the time.
	agents := map[string]*exec.Cmd{}
	agents["sim"], err = procs.Start(ctx, dir, "agent-sim", filepath.Join(bin, "edge-agent"), append(common, "--runtime", "sim",
		"--node-name", "bench-sim", "--start-delay", "0s", "--system-containers", "0")...)
	if err != nil {
		return err
	}
	defer procs.Stop(agents["sim"])
	for _, kind := range engines {
		engine, err := testenv.StartEngine(kind)
		if err != nil {
			return err
		}
		defer func() { _ = engine.Stop() }()
		agents[kind], err = procs.Start(ctx, dir, "agent-"+kind, filepath.Join(bin, "edge-agent"), append(common, "--runtime", "docker",
			"--runtime-endpoint", engine.Host, "--node-name", "bench-"+kind, "--image-registry", "edgeplane.local")...)
		if err != nil {
			return err
		}
		defer procs.Stop(agents[kind])
	}
	runtimes := append(slices.Clone(engines), "sim")
	for _, rt := range runtimes {
		n := "bench-" + rt
		if err := procs.WaitFor(ctx, n+" online", 200*time.Millisecond, func() (bool, error) {
			node := &edgev1alpha1.EdgeNode{}
			err := c.Get(ctx, client.ObjectKey{Name: n}, node)
			return err == nil && node.Status.Status == edgev1alpha1.NodeOnline, client.IgnoreNotFound(err)
		}); err != nil {
			return err
		}
	}

	fmt.Printf("spec change to running, %d changes each (the controller shows the instance successful at the new revision):\n", changes)
	fmt.Printf("  %-8s %8s %8s %8s\n", "runtime", "p50", "p90", "max")
	// The same figures as lines of key=value (make bench-agent's page),
	// after the table.
	var latencies []string
	for _, rt := range runtimes {
		took, err := specChanges(ctx, c, "lat-"+rt, "bench-"+rt, changes)
		if err != nil {
			return err
		}
		slices.Sort(took)
		fmt.Printf("  %-8s %8s %8s %8s\n", rt, pct(took, 50), pct(took, 90), took[len(took)-1])
		latencies = append(latencies, fmt.Sprintf("agentbench: runtime=%s changes=%d p50_s=%.2f p90_s=%.2f max_s=%.2f",
			rt, changes, pct(took, 50).Seconds(), pct(took, 90).Seconds(), took[len(took)-1].Seconds()))
	}
	for _, l := range latencies {
		fmt.Println(l)
	}

	// One image's pull stalled among 20 images on one node: the others run
	// regardless, and the Lease is renewed on time.
	if images > 1 {
		others, gap, err := stalledPull(ctx, c, dir, "bench-"+engines[0], images)
		if err != nil {
			return err
		}
		verdict := "within"
		if gap > renew+time.Second {
			verdict = "OVER"
		}
		fmt.Printf("%d images on %s, one pull stalled: the other %d run after %s; Lease renewal gaps at most %s (%s the renew interval %s + 1 s)\n",
			images, engines[0], images-1, others.Round(time.Millisecond), gap.Round(time.Millisecond), verdict, renew)
		fmt.Printf("agentbench-pull: engine=%s images=%d stalled=1 others_running_s=%.2f renew_gap_max_s=%.2f renew_interval_s=%.0f\n",
			engines[0], images, others.Seconds(), gap.Seconds(), renew.Seconds())
	}

	// The agent of the first engine with M real containers: its resident
	// memory and the CPU it uses, at the default 10 s metrics interval.
	node := "bench-" + engines[0]
	for i := range containers {
		if err := c.Create(ctx, service(fmt.Sprintf("box-%02d", i), node)); err != nil {
			return err
		}
	}
	if err := procs.WaitFor(ctx, "every container running", 200*time.Millisecond, func() (bool, error) {
		list := &edgev1alpha1.EdgeServiceList{}
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			return false, err
		}
		ok := 0
		for _, s := range list.Items {
			if cs, err := testenv.Instances(ctx, c, s.Namespace, s.Name); err == nil && s.Spec.Nodes[0] == node && len(cs) == 1 && cs[0].DeployStatus == edgev1alpha1.DeploySuccess {
				ok++
			}
		}
		return ok == containers+1, nil // and the latency run's service
	}); err != nil {
		return err
	}
	pid := agents[engines[0]].Process.Pid
	cpu0, err := procs.CPUTime(pid)
	if err != nil {
		return err
	}
	// The EdgeNode's writes meanwhile: the agent's reports (figures
	// included) and the controller's; a steady node's cost at rest.
	var peak int64
	writes, lastRV := 0, ""
	for deadline := time.Now().Add(window); time.Now().Before(deadline); {
		if rss, err := procs.RSS(pid); err == nil {
			peak = max(peak, rss)
		}
		en := &edgev1alpha1.EdgeNode{}
		if err := c.Get(ctx, client.ObjectKey{Name: node}, en); err == nil {
			if lastRV != "" && en.ResourceVersion != lastRV {
				writes++
			}
			lastRV = en.ResourceVersion
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	cpu1, err := procs.CPUTime(pid)
	if err != nil {
		return err
	}
	fmt.Printf("agent on %s with %d real containers, over %s: peak RSS %.1f MiB, CPU %.2f%% of one core; the EdgeNode written %d times (figures every 10 s, reported when they move)\n",
		engines[0], containers+1, window, float64(peak)/(1<<20), float64(cpu1-cpu0)/float64(window)*100, writes)
	fmt.Printf("agentbench-agent: engine=%s containers=%d window_s=%.0f rss_mib=%.1f cpu_pct=%.2f node_writes=%d\n",
		engines[0], containers+1, window.Seconds(), float64(peak)/(1<<20), float64(cpu1-cpu0)/float64(window)*100, writes)
	return nil
}

// specChanges times n changes of a service's configuration (its env).
func specChanges(ctx context.Context, c client.Client, name, node string, n int) ([]time.Duration, error) {
	svc := service(name, node)
	if err := c.Create(ctx, svc); err != nil {
		return nil, err
	}
	if err := waitSuccess(ctx, c, svc, 1); err != nil {
		return nil, err
	}
	took := make([]time.Duration, 0, n)
	for i := range n {
		// A patch of the spec alone, as a user's edit: the controller's
		// status writes in between do not conflict with it.
		base := svc.DeepCopy()
		svc.Spec.Config.Linux.Env = []string{"CHANGE=" + strconv.Itoa(i+1)}
		if err := c.Patch(ctx, svc, client.MergeFrom(base)); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := waitSuccess(ctx, c, svc, int64(i+2)); err != nil {
			return nil, err
		}
		took = append(took, time.Since(start).Round(time.Millisecond))
	}
	return took, nil
}

// waitSuccess polls (every 10 ms) until the service's one instance is
// successful at revision rev.
func waitSuccess(ctx context.Context, c client.Client, svc *edgev1alpha1.EdgeService, rev int64) error {
	for deadline := time.Now().Add(2 * time.Minute); ; {
		got := &edgev1alpha1.EdgeService{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
			return err
		}
		cs, err := testenv.Instances(ctx, c, svc.Namespace, svc.Name)
		if err != nil {
			return err
		}
		if len(cs) == 1 && cs[0].Revision == rev && cs[0].DeployStatus == edgev1alpha1.DeploySuccess {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not reach revision %d: %+v", svc.Name, rev, cs)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func service(name, node string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "box@1#linux", PullPolicy: edgev1alpha1.PullIfNotPresent}, Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Restart: "always"}}, Policy: edgev1alpha1.PolicyStatic}, Nodes: []string{node}},
	}
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)-1)*p/100]
}
