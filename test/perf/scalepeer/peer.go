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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/apiprofile"
)

// The users the peer's components are in a cluster, so that API Priority
// and Fairness sorts their requests as it does there: the built-in
// FlowSchemas kube-controller-manager and kube-scheduler put the first two
// in workload-high (where config/flowcontrol puts edgeplane's manager);
// system-node-high and system-nodes put the group system:nodes' Node and
// Lease writes in node-high and the rest (pod status) in system, as they
// do a kubelet's.
const (
	kcmUser       = "system:kube-controller-manager"
	schedulerUser = "system:kube-scheduler"
	kwokUser      = "system:node:kwok"
)

// kwokAnnotation marks the Nodes kwok plays; the taint of the same key
// keeps other pods off them, as kwok's documentation sets its nodes up.
const kwokAnnotation = "kwok.x-k8s.io/node"

// clientQPS is the peer's controllers' client rate: test/perf/scale's
// --manager-qps default, edgeplane's manager's rate (burst twice that).
// The same for both sides is the fair setting. kube-controller-manager's
// default is 20; kube-scheduler's is 50, and its binds alone, one per pod,
// would then take 10,000 pods 200 s.
const clientQPS = 200

// restWindow is how long the cost of the nodes at rest is measured: four
// Lease renewals of every node.
const restWindow = 60 * time.Second

// runPeer runs the workload on plain Kubernetes: N kwok nodes, then 5 per
// node Deployments of 2 replicas, timed from the first create until every
// Deployment has both pods running.
func runPeer(ctx context.Context, assets string, nodes int, cbor bool, timeout, within time.Duration, logDir string) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return result{}, err
	}
	dir, err := os.MkdirTemp("", "edgeplane-scalepeer")
	if err != nil {
		return result{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	// The control plane exactly as test/perf/scale starts it: envtest's flags
	// and the same audit log.
	auditArgs, err := writeAuditPolicy(dir)
	if err != nil {
		return result{}, err
	}
	env, cfg, c, err := testenv.Start(func(env *envtest.Environment) error {
		for k, v := range auditArgs {
			env.ControlPlane.GetAPIServer().Configure().Set(k, v)
		}
		if cbor {
			// The same flags as edgeplane's side (--cbor there).
			env.ControlPlane.GetAPIServer().Configure().Set("feature-gates", "CBORServingAndStorage=true")
		}
		return nil
	})
	if err != nil {
		return result{}, err
	}
	defer func() { _ = env.Stop() }()
	kcmKubeconfig, schedulerKubeconfig, kwokKubeconfig, err := identities(ctx, env, c, dir)
	if err != nil {
		return result{}, err
	}
	stagesFile, err := delayedStages(assets, dir)
	if err != nil {
		return result{}, err
	}
	pids := map[string]int{"scale-peer (creates, its cache)": os.Getpid()}
	if pids["kube-apiserver"], err = testenv.APIServerPID(cfg); err != nil {
		return result{}, err
	}
	if pid, err := testenv.EtcdPID(env); err == nil {
		pids["etcd"] = pid
	}
	qps := []string{"--kube-api-qps=" + strconv.Itoa(clientQPS), "--kube-api-burst=" + strconv.Itoa(2*clientQPS)}
	var started []*exec.Cmd
	defer func() { procs.Stop(started...) }()
	for _, p := range []struct {
		name string
		args []string
	}{
		// Its default controllers, each making its requests as
		// kube-controller-manager itself; no HTTPS endpoint.
		{"kube-controller-manager", append([]string{"--kubeconfig=" + kcmKubeconfig, "--leader-elect=false", "--controllers=*",
			"--use-service-account-credentials=false", "--bind-address=127.0.0.1", "--secure-port=0"}, qps...)},
		// Its default profile.
		{"kube-scheduler", append([]string{"--kubeconfig=" + schedulerKubeconfig, "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=0"}, qps...)},
		// kwokctl's default stages (hack/peer-assets.sh), a pod ready
		// startDelay after it is bound; a Lease of 40 s per
		// node, a kubelet's default and edgeplane's grace period,
		// renewed every 10 s (a quarter of it, as a kubelet renews;
		// kwokctl stretches both 5 times to go easy on big clusters);
		// no client rate limit, as kwok has none (a node each).
		{"kwok", []string{"--kubeconfig=" + kwokKubeconfig, "--config=" + stagesFile,
			"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=" + kwokAnnotation + "=fake",
			"--node-lease-duration-seconds=40"}},
	} {
		cmd, err := procs.Start(ctx, logDir, p.name, filepath.Join(assets, p.name), p.args...)
		if err != nil {
			return result{}, err
		}
		started = append(started, cmd)
		pids[p.name] = cmd.Process.Pid
	}

	// The run's own view, a watch: what it polls costs kube-apiserver
	// nothing.
	view, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return result{}, err
	}
	for _, o := range []client.Object{&corev1.Node{}, &appsv1.Deployment{}} {
		if _, err := view.GetInformer(ctx, o); err != nil {
			return result{}, err
		}
	}
	// Stopped before the control plane, so that its watches do not
	// complain of it going.
	vctx, stopView := context.WithCancel(ctx)
	defer stopView()
	go func() { _ = view.Start(vctx) }()
	if !view.WaitForCacheSync(vctx) {
		return result{}, errors.New("the run's own watch did not sync")
	}

	start := time.Now()
	if err := createAll(ctx, c, nodes, kwokNode); err != nil {
		return result{}, fmt.Errorf("creating nodes: %w", err)
	}
	if err := procs.WaitFor(ctx, "every node Ready", 500*time.Millisecond, func() (bool, error) {
		list := &corev1.NodeList{}
		if err := view.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		return countFunc(list.Items, schedulable) == nodes, nil
	}); err != nil {
		return result{}, err
	}
	fmt.Printf("plain Kubernetes: %d kwok nodes Ready and schedulable %v after the first create\n", nodes, time.Since(start).Round(100*time.Millisecond))

	quiet, settled, err := settle(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	if !settled {
		fmt.Printf("plain Kubernetes: the nodes' registration still wrote after %v; measuring the rest anyway\n", quiet.Round(time.Second))
	} else {
		fmt.Printf("plain Kubernetes: the nodes' registration settled %v later\n", quiet.Round(time.Second))
	}

	// What the nodes cost at rest (Lease renewals, the node controllers'
	// checks), with every node Ready and no Deployment yet.
	restRequests, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	restStart := procs.CPUTimes(pids)
	select {
	case <-ctx.Done():
		return result{}, ctx.Err()
	case <-time.After(restWindow):
	}
	restEnd := procs.CPUTimes(pids)
	restRequestsEnd, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	restAPI := restEnd["kube-apiserver"] - restStart["kube-apiserver"]
	restPerNode := float64(restAPI.Microseconds()) / 1000 / restWindow.Seconds() / float64(nodes)
	fmt.Printf("plain Kubernetes: at rest with %d nodes Ready, no Deployment, %v: %.1f API writes/s (%.1f/s but Leases); CPU in %% of one core:%s\nwrites meanwhile:%s\n",
		nodes, restWindow, writes(restRequests, restRequestsEnd, true)/restWindow.Seconds(),
		writes(restRequests, restRequestsEnd, false)/restWindow.Seconds(), procs.CPUUse(restStart, restEnd, restWindow),
		writesByRequest(restRequests, restRequestsEnd, "node", nodes, 8))

	deployments, instances := 5*nodes, 10*nodes
	cpuBefore := procs.CPUTimes(pids)
	machineBefore, _ := procs.MachineCPU()
	before, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	began := time.Now()
	// kube-apiserver's CPU by stage until every pod runs, as test/perf/scale
	// --stages splits edgeplane's.
	stagesDone, stages := make(chan struct{}), make(chan string, 1)
	go func() {
		line, err := apiprofile.Server(ctx, cfg, "kubernetes", stagesDone)
		if err != nil {
			fmt.Fprintln(os.Stderr, "plain Kubernetes: kube-apiserver's stages:", err)
		}
		stages <- line
	}()
	stopStages := sync.OnceFunc(func() { close(stagesDone) })
	defer stopStages()
	// 16 workers at the client's 1,000 requests/s, as test/perf/scale creates
	// its services.
	if err := createAll(ctx, c, deployments, deployment); err != nil {
		return result{}, fmt.Errorf("creating Deployments: %w", err)
	}
	created := time.Since(began)
	lastReport := time.Now()
	// A size plain Kubernetes cannot converge in reasonable time is
	// stopped at within, and its figures are of that time.
	wctx, stopWaiting := ctx, context.CancelFunc(func() {})
	if within > 0 {
		wctx, stopWaiting = context.WithDeadline(ctx, began.Add(within))
	}
	defer stopWaiting()
	done, running := 0, 0
	err = procs.WaitFor(wctx, "every pod running", 500*time.Millisecond, func() (bool, error) {
		list := &appsv1.DeploymentList{}
		// Read only: no copy of every Deployment twice a second.
		if err := view.List(ctx, list, client.InNamespace("default"), client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		done, running = countFunc(list.Items, complete), 0
		for _, d := range list.Items {
			running += int(min(d.Status.ReadyReplicas, 2))
		}
		if time.Since(lastReport) > 30*time.Second {
			fmt.Fprintf(os.Stderr, "  %d of %d Deployments with both pods running after %v\n", done, deployments, time.Since(began).Round(time.Second))
			lastReport = time.Now()
		}
		return done == deployments, nil
	})
	stopped := err != nil && ctx.Err() == nil && wctx.Err() != nil
	if err != nil && !stopped {
		return result{}, err
	}
	took := time.Since(began)
	cpuAfter := procs.CPUTimes(pids)
	machineAfter, _ := procs.MachineCPU()
	after, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return result{}, err
	}

	if stopped {
		fmt.Printf("plain Kubernetes: %d Deployments x 2 created in %v; stopped at the ceiling after %v with %d of %d Deployments (%d of %d pods) running, %.1f pods a second\n",
			deployments, created.Round(time.Millisecond), took.Round(time.Millisecond), done, deployments, running, instances, float64(running)/took.Seconds())
	} else {
		fmt.Printf("plain Kubernetes: %d Deployments x 2 created in %v; every pod running after %v\n", deployments, created.Round(time.Millisecond), took.Round(time.Millisecond))
	}
	fmt.Printf("plain Kubernetes: CPU used meanwhile:%s\n", procs.CPUUse(cpuBefore, cpuAfter, 0))
	// The machine is shared: what else ran tells whether the figures
	// can be trusted.
	others := machineAfter - machineBefore
	for n, d := range cpuAfter {
		others -= d - cpuBefore[n]
	}
	fmt.Printf("plain Kubernetes: CPU other processes on the machine used meanwhile: %.2f cores\n", max(0, others.Seconds()/took.Seconds()))
	api := cpuAfter["kube-apiserver"] - cpuBefore["kube-apiserver"]
	// Beyond rest, as test/perf/scale splits it: what the Deployments cost.
	beyond := api.Seconds() - restAPI.Seconds()/restWindow.Seconds()*took.Seconds()
	fmt.Printf("plain Kubernetes: kube-apiserver CPU for the Deployments: %.1f s beyond rest, %.2f ms per instance\n", beyond, beyond*1000/float64(instances))
	fmt.Printf("plain Kubernetes: API writes from the first create until every pod ran, by verb and resource (apiserver_request_total):%s\n",
		writesByRequest(before, after, "instance", instances, 15))
	r := peerResult(nodes, instances, running, took, stopped, api, writes(before, after, false), writes(before, after, true), restPerNode)
	stopStages()
	r.stages = <-stages
	return r, nil
}

// peerResult is the peer's figures. Stopped at the ceiling, they are per
// instance running by then, and its time is projected at the rate it
// reached: every instance running after took x instances / running.
func peerResult(nodes, instances, running int, took time.Duration, stopped bool, api time.Duration, writes, withLeases, restPerNode float64) result {
	per := instances
	if stopped {
		per = max(running, 1)
	}
	r := result{nodes: nodes, instances: instances, successS: took.Seconds() * float64(instances) / float64(per), apiserverCPUS: api.Seconds(),
		cpuMsPerInstance:  float64(api.Microseconds()) / 1000 / float64(per),
		writesPerInstance: writes / float64(per),
		writesWithLeases:  withLeases / float64(per), restCPUMsPerNodeS: restPerNode}
	r.line = fmt.Sprintf("peer: system=kubernetes nodes=%d instances=%d success_s=%.1f apiserver_cpu_s=%.1f apiserver_cpu_ms_per_instance=%.2f"+
		" writes_per_instance=%.2f writes_per_instance_with_leases=%.2f rest_apiserver_cpu_ms_per_node_s=%.4f",
		r.nodes, r.instances, r.successS, r.apiserverCPUS, r.cpuMsPerInstance, r.writesPerInstance, r.writesWithLeases, r.restCPUMsPerNodeS)
	if stopped {
		r.ceilingS, r.running = took.Seconds(), running
		r.line += fmt.Sprintf(" ceiling_s=%.1f running=%d pods_per_s=%.2f", r.ceilingS, running, float64(running)/took.Seconds())
	}
	return r
}

// settle waits until the nodes' registration is over, so that the rest
// window measures rest: kube-controller-manager posts a RegisteredNode
// event per node, one at a time, for a minute or more after 1,000 nodes
// are Ready. Over when 10 s pass with fewer than 5 writes but Leases; it
// gives up after 5 minutes.
func settle(ctx context.Context, cfg *rest.Config) (time.Duration, bool, error) {
	start := time.Now()
	last, err := testenv.APIRequests(ctx, cfg)
	for err == nil && time.Since(start) < 5*time.Minute {
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(10 * time.Second):
		}
		now, err := testenv.APIRequests(ctx, cfg)
		if err != nil {
			return 0, false, err
		}
		if writes(last, now, false) < 5 {
			return time.Since(start), true, nil
		}
		last = now
	}
	return time.Since(start), false, err
}

// identities writes the components' kubeconfigs. kube-controller-manager
// with --use-service-account-credentials=false makes every controller's
// requests as itself, and its built-in ClusterRole covers only what it
// does beside them (in a cluster kubeadm gives each controller a
// ServiceAccount instead); no built-in binding covers a node's user
// (kubelets are authorized by the Node authorizer, which envtest does not
// run). Both are bound to cluster-admin: RBAC is not what the comparison
// measures, and API Priority and Fairness goes by user and group, not by
// role. kube-scheduler keeps its built-in role.
func identities(ctx context.Context, env *envtest.Environment, c client.Client, dir string) (kcm, scheduler, kwok string, err error) {
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-scale-peer"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kcmUser},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kwokUser}}}
	if err := c.Create(ctx, binding); err != nil {
		return "", "", "", err
	}
	kcm, scheduler, kwok = filepath.Join(dir, "kcm.kubeconfig"), filepath.Join(dir, "scheduler.kubeconfig"), filepath.Join(dir, "kwok.kubeconfig")
	return kcm, scheduler, kwok, errors.Join(
		testenv.WriteUserKubeconfig(env, kcm, envtest.User{Name: kcmUser}),
		testenv.WriteUserKubeconfig(env, scheduler, envtest.User{Name: schedulerUser}),
		testenv.WriteUserKubeconfig(env, kwok, envtest.User{Name: kwokUser, Groups: []string{"system:nodes"}}))
}

// createAll creates n objects with 16 workers.
func createAll(ctx context.Context, c client.Client, n int, object func(int) client.Object) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error { return c.Create(gctx, object(i)) })
	}
	return g.Wait()
}

// kwokNode is a node for kwok to play, set up as kwok's documentation
// does, with room for far more pods than the run places.
func kwokNode(i int) client.Object {
	name := fmt.Sprintf("kwok-node-%05d", i)
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{kwokAnnotation: "fake"},
			Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: kwokAnnotation, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}},
		// A Node's status may be set when it is created.
		Status: corev1.NodeStatus{Capacity: room, Allocatable: room},
	}
}

// deployment is one of the run's Deployments: 2 replicas of a tiny pod
// that goes to the kwok nodes.
func deployment(i int) client.Object {
	name := fmt.Sprintf("app-%05d", i)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"type": "kwok"},
					Tolerations:  []corev1.Toleration{{Key: kwokAnnotation, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{Name: "app", Image: "app:1.0",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}}},
				},
			},
		},
	}
}

// schedulable says whether a node is Ready and carries none of the taints
// the node controllers set on a node not ready (or kube-apiserver's
// admission sets on a new one).
func schedulable(n corev1.Node) bool {
	ready := slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	})
	return ready && !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
		return strings.HasPrefix(t.Key, "node.kubernetes.io/")
	})
}

// complete says whether a Deployment has its 2 pods running the latest
// spec, as the Deployment controller has seen it.
func complete(d appsv1.Deployment) bool {
	s := d.Status
	return s.ObservedGeneration == d.Generation && s.UpdatedReplicas == 2 && s.ReadyReplicas == 2 && s.AvailableReplicas == 2
}

// countFunc counts the items f says yes to.
func countFunc[T any](items []T, f func(T) bool) int {
	n := 0
	for _, it := range items {
		if f(it) {
			n++
		}
	}
	return n
}
