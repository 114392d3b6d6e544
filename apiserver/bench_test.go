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

package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// BenchmarkFacade measures the list endpoints with 1,000 nodes and 10,000
// containers (1,000 services of 10 instances) in the cache, at pageSize 10
// and 100, over HTTP; and the same queries answered by listing the CRDs
// from the API server, as a client without the facade would. It prints
// the ratio of the two.
//
//	make bench  (or: go test ./apiserver -run '^$' -bench Facade)
func BenchmarkFacade(b *testing.B) {
	const nodes, services, perService, records = 1000, 1000, 10, 150
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, cfg, c, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: facadeNamespace}}))

	start := time.Now()
	nodeObjs := seedNodes(ctx, b, c, nodes, services*perService/nodes)
	svcObjs := seedServices(ctx, b, c, services, perService, nodeObjs)
	seedRecords(ctx, b, c, svcObjs[0], records)
	fmt.Printf("seeded %d nodes, %d services with %d containers, %d records in %v\n", nodes, services, services*perService, records, time.Since(start).Round(time.Second))

	// The facade alone, on a cache of everything: no reconciler changes
	// what the benchmark wrote.
	mo := manager.ForTest(controllers.DefaultOptions())
	mo.RunControllers, mo.API.Namespace = false, facadeNamespace
	m, err := manager.New(ctx, cfg, mo)
	must(b, err)
	go func() { _ = m.Start(ctx) }()
	var base string
	for deadline := time.Now().Add(time.Minute); base == "" || httpGet(b, base+"/readyz") != http.StatusOK; {
		if time.Now().After(deadline) {
			b.Fatal("the facade was not ready within a minute")
		}
		time.Sleep(50 * time.Millisecond)
		if m.FacadeAddr() != "" {
			base = "http://" + m.FacadeAddr()
		}
	}

	api := &apiQueries{c: c}
	serviceIDs, nodeIDs := make([]string, 0, 10), make([]string, 0, 10)
	for i := range 10 {
		serviceIDs = append(serviceIDs, string(svcObjs[i].UID))
		nodeIDs = append(nodeIDs, string(nodeObjs[i*10].UID))
	}
	queries := []struct {
		name   string
		facade func(size int) string
		direct func(ctx context.Context, size int) (int, error)
	}{
		{"nodes", func(size int) string { return fmt.Sprintf("/api/v1/node?pageSize=%d", size) }, api.nodes},
		{"containersByService", func(size int) string {
			return fmt.Sprintf("/api/v1/container/service?serviceIds[]=%s&pageNum=1&pageSize=%d", strings.Join(serviceIDs, "&serviceIds[]="), size)
		}, func(ctx context.Context, size int) (int, error) {
			return api.containersOfServices(ctx, serviceIDs, size)
		}},
		{"containersByNode", func(size int) string {
			return fmt.Sprintf("/api/v1/container/node?nodeIds[]=%s&pageNum=1&pageSize=%d", strings.Join(nodeIDs, "&nodeIds[]="), size)
		}, func(ctx context.Context, size int) (int, error) { return api.containersOfNodes(ctx, nodeIDs, size) }},
		{"services", func(size int) string { return fmt.Sprintf("/api/v1/service?pageSize=%d", size) }, api.services},
		{"records", func(size int) string {
			return fmt.Sprintf("/api/v1/service/record?id=%s&pageSize=%d", svcObjs[0].UID, size)
		},
			func(ctx context.Context, size int) (int, error) { return api.records(ctx, svcObjs[0].UID, size) }},
	}
	type result struct {
		facade, handler, direct, parallel time.Duration
		// trivial is the trivial handler's time a request, measured right
		// before parallel.
		trivial time.Duration
		// bytes is the answer's size; sameSize the throughput of a trivial
		// handler that sends those bytes as they are: the floor for that
		// much to carry.
		bytes    int
		sameSize time.Duration
	}
	results := map[string]*result{}
	// The floor a list endpoint is measured against: a trivial handler
	// that writes a fixed envelope, served the same way.
	trivial := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":200,"message":"success","fieldErrors":null,"data":{"list":[],"total":0,"pageNum":1,"pageSize":10}}`)
	}))
	defer trivial.Close()
	// measureTrivial measures the trivial handler from every core: it runs
	// right before each list's own run, so that both see the same machine.
	measureTrivial := func(b *testing.B) time.Duration {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if code := httpGet(b, trivial.URL); code != http.StatusOK {
					b.Fatalf("trivial: %d", code)
				}
			}
		})
		return b.Elapsed() / time.Duration(b.N)
	}
	handler := m.Facade().Handler()
	var order []string
	for _, q := range queries {
		for _, size := range []int{10, 100} {
			key := fmt.Sprintf("%s/pageSize=%d", q.name, size)
			order = append(order, key)
			results[key] = &result{}
			b.Run(key+"/facade", func(b *testing.B) {
				url := base + q.facade(size)
				for b.Loop() {
					if code := httpGet(b, url); code != http.StatusOK {
						b.Fatalf("%s: %d", url, code)
					}
				}
				results[key].facade = b.Elapsed() / time.Duration(b.N)
			})
			// In the process, without the network: the facade's own cost.
			b.Run(key+"/handler", func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, q.facade(size), nil)
				for b.Loop() {
					rec := httptest.NewRecorder()
					handler.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("%s: %d", q.facade(size), rec.Code)
					}
				}
				results[key].handler = b.Elapsed() / time.Duration(b.N)
			})
			// Clients on every core at once: throughput, against the trivial
			// handler's just before.
			b.Run(key+"/trivial", func(b *testing.B) { results[key].trivial = measureTrivial(b) })
			b.Run(key+"/parallel", func(b *testing.B) {
				url := base + q.facade(size)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if code := httpGet(b, url); code != http.StatusOK {
							b.Fatalf("%s: %d", url, code)
						}
					}
				})
				results[key].parallel = b.Elapsed() / time.Duration(b.N)
			})
			body := httpBody(b, base+q.facade(size))
			results[key].bytes = len(body)
			fixed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			}))
			b.Run(key+"/trivial-same-size", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if code := httpGet(b, fixed.URL); code != http.StatusOK {
							b.Fatalf("trivial: %d", code)
						}
					}
				})
				results[key].sameSize = b.Elapsed() / time.Duration(b.N)
			})
			fixed.Close()
			b.Run(key+"/apiserver", func(b *testing.B) {
				for b.Loop() {
					if _, err := q.direct(ctx, size); err != nil {
						b.Fatal(err)
					}
				}
				results[key].direct = b.Elapsed() / time.Duration(b.N)
			})
		}
	}
	// Printed, not logged: a parent benchmark's log shows only with -v.
	fmt.Printf("\n%-32s %12s %12s %16s %8s %14s %14s %10s %8s %14s\n", "query", "facade HTTP", "handler", "API server LIST", "ratio", "facade req/s", "trivial req/s", "of trivial", "bytes", "of same-size")
	for _, key := range order {
		r := results[key]
		if r.facade > 0 && r.parallel > 0 && r.trivial > 0 && r.sameSize > 0 {
			fmt.Printf("%-32s %12v %12v %16v %7.0fx %14.0f %14.0f %9.2f %8d %14.2f\n", key, r.facade.Round(time.Microsecond), r.handler.Round(time.Microsecond),
				r.direct.Round(time.Microsecond), float64(r.direct)/float64(r.facade), float64(time.Second)/float64(r.parallel), float64(time.Second)/float64(r.trivial),
				float64(r.trivial)/float64(r.parallel), r.bytes, float64(r.sameSize)/float64(r.parallel))
		}
	}
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// httpBody is the body of one answer.
func httpBody(b *testing.B, url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %v", url, resp.StatusCode, err)
	}
	return body
}

func httpGet(b *testing.B, url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// parallel runs f for 0..n-1, 16 at a time.
func parallel(b *testing.B, n int, f func(i int) error) { must(b, testenv.Parallel(n, f)) }

func seedNodes(ctx context.Context, b *testing.B, c client.Client, n, perNode int) []*edgev1alpha1.EdgeNode {
	out := make([]*edgev1alpha1.EdgeNode, n)
	boot := metav1.NewTime(time.Now().Add(-time.Hour))
	parallel(b, n, func(i int) error {
		node := &edgev1alpha1.EdgeNode{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i)},
			Spec:       edgev1alpha1.EdgeNodeSpec{Address: "10.9.0.1:7200", Type: "linux", Arch: "amd64"},
		}
		if err := c.Create(ctx, node); err != nil {
			return err
		}
		node.Status = edgev1alpha1.EdgeNodeStatus{NodeInfo: &edgev1alpha1.NodeInfo{Type: "linux", Arch: "amd64"}, BootTime: &boot, Status: edgev1alpha1.NodeOnline}
		for j := range perNode {
			node.Status.Containers = append(node.Status.Containers, edgev1alpha1.ObservedContainer{
				Name: fmt.Sprintf("c-%d-%d", i, j), ID: fmt.Sprintf("rt-%d-%d", i, j), TaskID: fmt.Sprintf("task-%04d-%02d", i, j), Revision: 1,
				State: edgev1alpha1.ContainerRunning, StartedTime: &boot, CPU: &edgev1alpha1.CPUUsage{Total: 5, Cores: []float64{2, 8}},
				Memory: &edgev1alpha1.MemoryUsage{Limit: 1 << 30, Usage: 1 << 28, MaxUsage: 1 << 29}, Size: &edgev1alpha1.SizeUsage{Usage: 1 << 20, Limit: 1 << 30},
			})
		}
		out[i] = node
		return c.Status().Update(ctx, node)
	})
	return out
}

// seedServices creates services whose instances are the containers the
// nodes report: instance j of service i runs on node (i*perService+j)/perNode,
// as the nodes' assignments say.
func seedServices(ctx context.Context, b *testing.B, c client.Client, n, perService int, nodes []*edgev1alpha1.EdgeNode) []*edgev1alpha1.EdgeService {
	out := make([]*edgev1alpha1.EdgeService, n)
	perNode := n * perService / len(nodes)
	parallel(b, n, func(i int) error {
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: fmt.Sprintf("svc-%04d", i)},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: new(int32(perService))}},
		}
		if err := c.Create(ctx, svc); err != nil {
			return err
		}
		svc.Status.Revision = 1
		out[i] = svc
		return c.Status().Update(ctx, svc)
	})
	assignments := make([]*edgev1alpha1.NodeAssignment, len(nodes))
	for i, node := range nodes {
		assignments[i] = &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: node.Name},
			Spec: edgev1alpha1.NodeAssignmentSpec{Services: map[string]edgev1alpha1.AssignedService{}}}
	}
	for i, svc := range out {
		for j := range perService {
			k := i*perService + j
			a := assignments[k/perNode]
			obs := nodes[k/perNode].Status.Containers[k%perNode]
			key := edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)
			e := a.Spec.Services[key]
			e.UID, e.Revision, e.Spec = string(svc.UID), 1, svc.Spec.DeploySpec
			e.Instances = append(e.Instances, edgev1alpha1.AssignedInstance{
				TaskID: obs.TaskID, Name: obs.Name, Revision: 1, DeployNum: 1, TaskCreatedTime: metav1.NewMicroTime(time.Unix(1700000000, int64(k)*1e6)),
			})
			a.Spec.Services[key] = e
		}
	}
	parallel(b, len(assignments), func(i int) error { return c.Create(ctx, assignments[i]) })
	return out
}

func seedRecords(ctx context.Context, b *testing.B, c client.Client, svc *edgev1alpha1.EdgeService, n int) {
	parallel(b, n, func(i int) error {
		return c.Create(ctx, &edgev1alpha1.DeployRecord{
			ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: fmt.Sprintf("%s-%d", svc.Name, i+1), Labels: map[string]string{edgev1alpha1.LabelServiceUID: string(svc.UID)}},
			Spec:       edgev1alpha1.DeployRecordSpec{ServiceName: svc.Name, Revision: int64(i + 1), DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(fmt.Sprintf("app@%d#linux", i+1))}}},
		})
	})
}

// apiQueries answers the facade's list queries by listing CRDs from the
// API server, as a client would without the facade's cache and indexes.
type apiQueries struct{ c client.Client }

func (a *apiQueries) nodes(ctx context.Context, size int) (int, error) {
	list := &edgev1alpha1.EdgeNodeList{}
	if err := a.c.List(ctx, list); err != nil {
		return 0, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return min(size, len(list.Items)), nil
}

func (a *apiQueries) services(ctx context.Context, size int) (int, error) {
	list := &edgev1alpha1.EdgeServiceList{}
	if err := a.c.List(ctx, list, client.InNamespace(facadeNamespace)); err != nil {
		return 0, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return min(size, len(list.Items)), nil
}

func (a *apiQueries) containersOfServices(ctx context.Context, ids []string, size int) (int, error) {
	assignments := &edgev1alpha1.NodeAssignmentList{}
	if err := a.c.List(ctx, assignments); err != nil {
		return 0, err
	}
	nodes := &edgev1alpha1.EdgeNodeList{}
	if err := a.c.List(ctx, nodes); err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for _, as := range assignments.Items {
		for _, e := range as.Spec.Services {
			if want[e.UID] {
				n += len(e.Instances)
			}
		}
	}
	return min(size, n), nil
}

func (a *apiQueries) containersOfNodes(ctx context.Context, ids []string, size int) (int, error) {
	nodes := &edgev1alpha1.EdgeNodeList{}
	if err := a.c.List(ctx, nodes); err != nil {
		return 0, err
	}
	assignments := &edgev1alpha1.NodeAssignmentList{}
	if err := a.c.List(ctx, assignments); err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, n := range nodes.Items {
		for _, id := range ids {
			if string(n.UID) == id {
				want[n.Name] = true
			}
		}
	}
	n := 0
	for _, as := range assignments.Items {
		if want[as.Name] {
			for _, e := range as.Spec.Services {
				n += len(e.Instances)
			}
		}
	}
	return min(size, n), nil
}

func (a *apiQueries) records(ctx context.Context, uid types.UID, size int) (int, error) {
	list := &edgev1alpha1.DeployRecordList{}
	if err := a.c.List(ctx, list, client.InNamespace(facadeNamespace), client.MatchingLabels{edgev1alpha1.LabelServiceUID: string(uid)}); err != nil {
		return 0, err
	}
	return min(size, len(list.Items)), nil
}
