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

// Command reportcost measures what one agent report costs kube-apiserver
// (make report-cost): the CPU of a node's status write beyond its idle
// rate, and the node's stored size, for a node running CONTAINERS
// containers, written as the agent writes it (a server-side apply), or
// with WAY=merge as a JSON merge patch of the same status, for
// comparison, or with WAY=schemaless as the agent writes it to a CRD whose
// container items have no schema (what the schema of the hot list costs:
// docs/benchmarks.md says why the shipped CRD keeps it). One line per run:
//
//	reportcost: way= containers= reports= apiserver_cpu_ms_per_report= object_bytes= managed_fields_bytes=
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

func main() {
	var sizes, way string
	var reports int
	flag.StringVar(&way, "way", "apply", "apply, merge (a JSON merge patch of the same status) or schemaless (apply, to a CRD whose container items have no schema).")
	flag.StringVar(&sizes, "containers", "6,50", "Containers on the node, comma-separated: one run each.")
	flag.IntVar(&reports, "reports", 300, "Reports per run, each a container's state changed.")
	flag.Parse()
	if err := run(context.Background(), sizes, reports, way); err != nil {
		fmt.Fprintln(os.Stderr, "reportcost:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, sizes string, reports int, way string) error {
	env, cfg, c, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	pid, err := testenv.APIServerPID(cfg)
	if err != nil {
		return err
	}
	switch way {
	case "apply", "merge":
	case "schemaless":
		if err := dropContainerSchema(ctx, c); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--way %q: want apply, merge or schemaless", way)
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--containers %q: %w", s, err)
		}
		line, err := measure(ctx, c, pid, n, reports, way)
		if err != nil {
			return err
		}
		fmt.Println(line)
	}
	return nil
}

// dropContainerSchema replaces the schema of an EdgeNode's
// status.containers items with an object that keeps whatever it holds,
// then waits until kube-apiserver serves it: a container written with a
// field the shipped schema prunes keeps it.
func dropContainerSchema(ctx context.Context, c client.Client) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := c.Get(ctx, client.ObjectKey{Name: "edgenodes." + edgev1alpha1.GroupVersion.Group}, crd); err != nil {
		return err
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for i := range versions {
		v := versions[i].(map[string]any)
		items := []string{"schema", "openAPIV3Schema", "properties", "status", "properties", "containers", "items"}
		if err := unstructured.SetNestedField(v, map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, items...); err != nil {
			return err
		}
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		return err
	}
	if err := c.Update(ctx, crd); err != nil {
		return err
	}
	probe := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "report-cost-probe"}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:7200", Type: "linux"}}
	if err := c.Create(ctx, probe); err != nil {
		return err
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"containers":[{"name":"probe","probe":true}]}}`))
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(edgev1alpha1.GroupVersion.WithKind("EdgeNode"))
		got.SetName(probe.Name)
		if err := c.Status().Patch(ctx, got, patch); err != nil {
			return err
		}
		cs, _, _ := unstructured.NestedSlice(got.Object, "status", "containers")
		if len(cs) == 1 && cs[0].(map[string]any)["probe"] == true {
			return c.Delete(ctx, probe)
		}
	}
	return fmt.Errorf("kube-apiserver still prunes the containers' fields a minute after their schema was dropped")
}

// containers are n containers as an agent reports them, the i-th report's
// first one in another state.
func containers(n, i int) []edgev1alpha1.ObservedContainer {
	t := metav1.NewTime(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	out := make([]edgev1alpha1.ObservedContainer, n)
	for k := range out {
		out[k] = edgev1alpha1.ObservedContainer{
			Name: fmt.Sprintf("svc-%05d-%08x", k, k), ID: fmt.Sprintf("%064x", k), TaskID: fmt.Sprintf("%08x-0000-4000-8000-%012x", k, k),
			Revision: 3, State: edgev1alpha1.ContainerRunning, Image: "registry.example/app:1.0", ImageID: fmt.Sprintf("sha256:%064x", k),
			ImageArch: "amd64", CreatedTime: &t, StartedTime: &t,
			CPU: &edgev1alpha1.CPUUsage{}, Memory: &edgev1alpha1.MemoryUsage{}, Size: &edgev1alpha1.SizeUsage{},
		}
	}
	if i%2 == 1 {
		out[0].State, out[0].RestartCount = edgev1alpha1.ContainerExited, int32(i)
	}
	return out
}

func measure(ctx context.Context, c client.Client, pid, n, reports int, way string) (string, error) {
	name := fmt.Sprintf("report-cost-%d", n)
	node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:7200", Type: "linux"}}
	if err := c.Create(ctx, node); err != nil {
		return "", err
	}
	info := edgev1alpha1.NodeInfo{Type: "linux", Arch: "amd64", OSVersion: "Debian 13", RuntimeVersion: "sim 1", AgentVersion: "dev", MaxInstances: 2000, ReadsAssignment: true}
	boot := metav1.NewTime(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	report := func(i int) error {
		cs := containers(n, i)
		if way == "merge" {
			cnt := agent.Count(cs, nil)
			st := edgev1alpha1.EdgeNodeStatus{NodeInfo: &info, BootTime: &boot, Containers: cs, ContainerTotal: cnt.ContainerTotal, ContainerRunning: cnt.ContainerRunning}
			raw, _ := json.Marshal(map[string]any{"status": st})
			return c.Status().Patch(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch("application/merge-patch+json", raw), client.FieldOwner(agent.FieldOwner),
				// As the agent writes its apply.
				client.FieldValidation(metav1.FieldValidationIgnore))
		}
		return agent.ApplyStatus(ctx, c, name, info, &boot, nil, cs, agent.Count(cs, nil))
	}
	if err := report(0); err != nil {
		return "", err
	}
	time.Sleep(2 * time.Second)
	idle0, err := procs.CPUTime(pid)
	if err != nil {
		return "", err
	}
	start := time.Now()
	time.Sleep(5 * time.Second)
	idle1, _ := procs.CPUTime(pid)
	idleRate := float64(idle1-idle0) / float64(time.Since(start))

	cpu0, _ := procs.CPUTime(pid)
	start = time.Now()
	for i := 1; i <= reports; i++ {
		if err := report(i); err != nil {
			return "", err
		}
	}
	took := time.Since(start)
	cpu1, _ := procs.CPUTime(pid)
	busy := float64(cpu1-cpu0) - idleRate*float64(took)

	if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
		return "", err
	}
	whole, _ := json.Marshal(node)
	mf, _ := json.Marshal(node.ManagedFields)
	return fmt.Sprintf("reportcost: way=%s containers=%d reports=%d apiserver_cpu_ms_per_report=%.3f object_bytes=%d managed_fields_bytes=%d",
		way, n, reports, busy/float64(reports)/float64(time.Millisecond), len(whole), len(mf)), nil
}
