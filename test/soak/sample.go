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
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// sampled is a process the run samples: its pid (0 when there is none
// to sample now) and how its goroutines are counted.
type sampled struct {
	name       string
	pid        int
	goroutines func(ctx context.Context) (float64, error)
}

// sampler samples everything at minute 0 of the churn and every
// SampleEvery until its end.
func (r *run) sampler(ctx context.Context, samples *Samples, limits *LimitWatch) {
	for k := 0; ; k++ {
		at := r.began.Add(time.Duration(k) * r.cfg.SampleEvery)
		if at.After(r.began.Add(r.cfg.Duration)) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		minute := r.sample(ctx, samples, limits)
		r.mu.Lock()
		res := r.res
		r.mu.Unlock()
		r.logf("minute %.0f of %.0f: %d changes, %d failovers, %d cuts, %d API server pauses, %d short-lived services created, %d churn errors",
			minute, r.cfg.Duration.Minutes(), res.Changes, res.Failovers, res.Cuts, res.APIServerPauses, res.ServicesCreated, res.ChurnErrors)
	}
}

// sample takes one sample of every series: each process's memory,
// goroutines and open descriptors, the count of each kind of object and
// of the real engine's containers, etcd's database in use, and the
// services over their history limit;
// it returns the sample's minute.
func (r *run) sample(ctx context.Context, samples *Samples, limits *LimitWatch) float64 {
	minute := math.Round(time.Since(r.began).Minutes()*100) / 100
	for _, p := range r.sampled(ctx) {
		rss, fds, gr := math.NaN(), math.NaN(), math.NaN()
		if p.pid != 0 {
			if b, err := procs.RSS(p.pid); err == nil {
				rss = float64(b) / (1 << 20)
			}
			if entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid)); err == nil {
				fds = float64(len(entries))
			}
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if v, err := p.goroutines(sctx); err == nil {
				gr = v
			}
			cancel()
		}
		samples.Add(minute, p.name+" rss", MiB, rss)
		samples.Add(minute, p.name+" goroutines", Goroutines, gr)
		samples.Add(minute, p.name+" fds", FDs, fds)
	}
	// At once: while the API server is stopped each waits out its
	// timeout, and one after another they would delay the next sample.
	counts := make([]float64, len(counted))
	var wg sync.WaitGroup
	for i, k := range counted {
		wg.Go(func() { counts[i] = r.countOf(ctx, k.gvk) })
	}
	wg.Wait()
	for i, k := range counted {
		samples.Add(minute, k.name, Objects, counts[i])
	}
	if r.eng != nil {
		samples.Add(minute, realSeries, Objects, r.engineContainers(ctx))
	}
	bound := math.NaN()
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.view.List(ctx, services, client.InNamespace(namespace)); err == nil {
		bound = float64(RecordBound(services.Items))
	}
	samples.Add(minute, recordBound, Objects, bound)
	samples.SetBound("DeployRecord", recordBound)
	db := math.NaN()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if m, err := testenv.Scrape(sctx, http.DefaultClient, r.env.ControlPlane.Etcd.URL.String()+"/metrics"); err == nil {
		if v, ok := m["etcd_mvcc_db_total_size_in_use_in_bytes"]; ok {
			db = v / (1 << 20)
		}
	}
	samples.Add(minute, "etcd db in use", MiB, db)
	if over, err := r.overLimit(ctx, r.view); err == nil {
		limits.Observe(over)
	}
	return minute
}

// sampled are the processes at this moment: the managers by role, as
// failovers swap them, then the ones that live through the run. Only the
// agents lack Prometheus' go_goroutines (they serve no metrics): their
// goroutines are counted from their Go profile.
func (r *run) sampled(ctx context.Context) []sampled {
	prom := func(url string, hc *http.Client) func(context.Context) (float64, error) {
		return func(ctx context.Context) (float64, error) {
			m, err := testenv.Scrape(ctx, hc, url)
			if err != nil {
				return 0, err
			}
			v, ok := m["go_goroutines"]
			if !ok {
				return 0, errors.New("no go_goroutines")
			}
			return v, nil
		}
	}
	plain := func(addr string) func(context.Context) (float64, error) {
		return prom("http://"+addr+"/metrics", http.DefaultClient)
	}
	leader, standby := sampled{name: "manager leader"}, sampled{name: "manager standby"}
	if i, err := r.managers.Leader(ctx); err == nil {
		leader.pid, leader.goroutines = r.managers.Pid(i), plain(r.managers.Metrics[i])
		standby.pid, standby.goroutines = r.managers.Pid(1-i), plain(r.managers.Metrics[1-i])
	}
	out := []sampled{leader, standby, {"read replica", r.replica.Process.Pid, plain(r.replicaMetrics)}}
	for i, addr := range r.hubMetrics {
		out = append(out, sampled{fmt.Sprintf("hub-%c", 'a'+i), r.hubs.Pid(i), plain(addr)})
	}
	out = append(out, sampled{"agent", r.agent.Process.Pid, profiled(r.agentPprof)},
		sampled{"agent (cut nodes)", r.cutAgent.Process.Pid, profiled(r.cutPprof)})
	if r.realAgent != nil {
		out = append(out, sampled{"agent (real node)", r.realAgent.Process.Pid, profiled(r.realPprof)})
	}
	apiserver := func(context.Context) (float64, error) { return 0, errors.New("no client") }
	if hc, err := rest.HTTPClientFor(r.restCfg); err == nil {
		apiserver = prom(strings.TrimSuffix(r.restCfg.Host, "/")+"/metrics", hc)
	}
	return append(out, sampled{"kube-apiserver", r.apiserverPID, apiserver},
		sampled{"etcd", r.etcdPID, prom(r.env.ControlPlane.Etcd.URL.String()+"/metrics", http.DefaultClient)})
}

// profiled counts a Go process's goroutines from its goroutine profile,
// whose first line is "goroutine profile: total N".
func profiled(addr string) func(context.Context) (float64, error) {
	return func(ctx context.Context) (float64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/goroutine?debug=1", nil)
		if err != nil {
			return 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil {
			return 0, err
		}
		n, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutine profile: total ")
		if !ok {
			return 0, fmt.Errorf("not a goroutine profile: %q", line)
		}
		return strconv.ParseFloat(n, 64)
	}
}

// counted are the kinds whose objects are counted at every sample.
var counted = []struct {
	name string
	gvk  schema.GroupVersionKind
}{
	{"EdgeService", edgev1alpha1.GroupVersion.WithKind("EdgeServiceList")},
	{"DeployRecord", edgev1alpha1.GroupVersion.WithKind("DeployRecordList")},
	{"NodeAssignment", edgev1alpha1.GroupVersion.WithKind("NodeAssignmentList")},
	{"EdgeNode", edgev1alpha1.GroupVersion.WithKind("EdgeNodeList")},
	{"ProvisionTemplate", edgev1alpha1.GroupVersion.WithKind("ProvisionTemplateList")},
	{"Event", corev1.SchemeGroupVersion.WithKind("EventList")},
	{"Lease", coordinationv1.SchemeGroupVersion.WithKind("LeaseList")},
}

// recordBound is the series of RecordBound, which bounds DeployRecord's.
const recordBound = "DeployRecord bound"

// countOf counts the objects of a kind in every namespace, as the API
// server holds them (their metadata only); NaN when it does not answer
// within 10 s (stopped).
func (r *run) countOf(ctx context.Context, gvk schema.GroupVersionKind) float64 {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk)
	if err := r.c.List(ctx, list); err != nil {
		return math.NaN()
	}
	return float64(len(list.Items))
}

// overLimit is OverLimit of the services and records c holds: the run's
// watch during the churn, the API server at the end.
func (r *run) overLimit(ctx context.Context, c client.Reader) (map[types.UID]string, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := c.List(ctx, services, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	records := &edgev1alpha1.DeployRecordList{}
	if err := c.List(ctx, records, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	counts := map[types.UID]int{}
	for _, rec := range records.Items {
		counts[types.UID(rec.Labels[edgev1alpha1.LabelServiceUID])]++
	}
	return OverLimit(services.Items, counts), nil
}
