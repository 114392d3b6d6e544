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

// Package soak is make soak: the whole system on one machine for an hour
// under steady churn and recurring faults, sampled every minute, judged
// on what grows, what was recorded, and how the facade answers at the end
// against the start (docs/soak.md).
//
// It runs two managers with leader election and the facade, a read
// replica of the facade, two edge hub replicas behind a balancer, and
// simulated nodes in two agent processes, one of which is cut off and
// back, and, where a container engine can be started, one real agent on
// it whose services change every few minutes. The churn edits, scales,
// pauses and rolls back long-lived services, rolls some out to an image
// that fails, and creates and deletes short-lived services with their
// templates through the facade; readers and the console's polling load
// the facade meanwhile. The leading manager is SIGKILLed every few
// minutes, the API server stopped for a while every twenty.
package soak

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// Config sizes a run.
type Config struct {
	// FiguresPage, if set, is where the run writes its figures as a page
	// of docs/figures (figuresPage), its plots in a folder beside it.
	FiguresPage string
	// Bin holds the manager and edge-agent binaries; Out receives the
	// samples, the plots and every process's log.
	Bin, Out string
	// Duration is how long the churn and the faults go on; the setup
	// before and the convergence after come on top.
	Duration time.Duration
	// Nodes are simulated in one agent process, CutNodes more in another
	// whose link to the hub is cut (or which is stopped) every CutEvery
	// for CutFor: less than the node grace period (40 s), so that none
	// may be declared offline.
	Nodes, CutNodes int
	// Services are long-lived dynamic services of two instances; every
	// other one rolls out in waves with a canary and autoRollback.
	Services int
	// Rate is the churn's actions on them per second.
	Rate float64
	// Every EphemeralEvery a folder, a template in it and a service from
	// it are created through the facade; past EphemeralKeep the oldest
	// service is deleted through the facade and its template and folder
	// through the API (the facade deletes no template).
	EphemeralEvery time.Duration
	EphemeralKeep  int
	// FailoverEvery the leading manager is SIGKILLed; PauseEvery the API
	// server is stopped (SIGSTOP) for PauseFor. A period of 0 turns the
	// fault off.
	FailoverEvery, CutEvery, PauseEvery time.Duration
	CutFor, PauseFor                    time.Duration
	// ReadRate is the facade readers' requests per second at most;
	// ConsoleEvery the console's refresh (apiserver/console/app.js).
	ReadRate     float64
	ConsoleEvery time.Duration
	// SampleEvery is the sampling period.
	SampleEvery time.Duration
	// EventTTL is kube-apiserver's --event-ttl: shorter than the warm-up,
	// so that the count of Events can settle within the run (the default
	// hour would make it grow throughout).
	EventTTL time.Duration
	// LeaseDuration is the managers' leader election lease.
	LeaseDuration time.Duration
	// Timeout bounds the setup's waits and the convergence after the churn.
	Timeout time.Duration
	// Engine is the real node's container engine: podman, docker, or
	// none for no real node. RealServices are static services on it,
	// each changed every RealChangeEvery (0: never).
	Engine          string
	RealServices    int
	RealChangeEvery time.Duration
	Log             io.Writer
}

// Result is what a run found.
type Result struct {
	Duration           time.Duration
	Nodes              int
	Changes, BadImages int
	Pauses, Rollbacks  int
	AutoRollbacks      int
	ChurnErrors        int
	Failovers, Cuts    int
	APIServerPauses    int
	FailoverMax        time.Duration
	// ManagerExits are the managers that exited on their own and were
	// started again: a leader that cannot renew its lease through an API
	// server outage longer than its renew deadline exits, by design.
	ManagerExits          int
	ServicesCreated       int
	ServicesDeleted       int
	TemplatesCreated      int
	TemplatesDeleted      int
	FacadeOK, FacadeFail  int
	ConsoleOK, ConsoleErr int
	// Offline are the nodes the manager declared offline during the
	// churn: reported, not judged (docs/soak.md).
	Offline int
	// Missing and Duplicates are versions of a service's spec the watch
	// delivered and no record holds, and records beyond one per version;
	// OverLimit are services that held more records than their
	// revisionHistoryLimit while settled; Unconverged are services not
	// settled within Timeout after the churn.
	Missing, Duplicates, OverLimit, Unconverged int
	// RealNode says whether the real-engine node ran; RealChanges are
	// its services' changes (counted in Changes too); RealMismatches are
	// the engine's containers at the end beyond, short of, or other than
	// one per instance of those services at its current configuration.
	RealNode                    bool
	RealChanges, RealMismatches int
	// P99 compares the facade readers' first and last windows.
	P99 P99Verdict
	// Growth judges every sampled series; Grown names those grown.
	Growth []Growth
	Grown  []string
}

// Line is the one-line summary a run prints last.
func (r Result) Line() string {
	// Named as their plots' files: no space in a key=value line.
	grown := "none"
	if len(r.Grown) > 0 {
		names := make([]string, len(r.Grown))
		for i, g := range r.Grown {
			names[i] = fileName(g)
		}
		grown = strings.Join(names, ",")
	}
	p99 := func(d time.Duration, ok bool) float64 {
		if !ok {
			return math.NaN()
		}
		return float64(d.Microseconds()) / 1000
	}
	return fmt.Sprintf("soak: duration_m=%.0f nodes=%d changes=%d failovers=%d failover_max_s=%.1f manager_exits=%d cuts=%d apiserver_pauses=%d"+
		" bad_images=%d pauses=%d rollbacks=%d auto_rollbacks=%d churn_errors=%d services_created=%d services_deleted=%d templates_created=%d templates_deleted=%d"+
		" facade_requests=%d facade_errors=%d console_requests=%d console_errors=%d offline=%d"+
		" records_over_limit=%d unconverged=%d missing=%d duplicates=%d p99_first_ms=%.1f p99_last_ms=%.1f judged=%d grown=%s real_node=%d real_mismatches=%d",
		r.Duration.Minutes(), r.Nodes, r.Changes, r.Failovers, r.FailoverMax.Seconds(), r.ManagerExits, r.Cuts, r.APIServerPauses,
		r.BadImages, r.Pauses, r.Rollbacks, r.AutoRollbacks, r.ChurnErrors, r.ServicesCreated, r.ServicesDeleted, r.TemplatesCreated, r.TemplatesDeleted,
		r.FacadeOK+r.FacadeFail, r.FacadeFail, r.ConsoleOK+r.ConsoleErr, r.ConsoleErr, r.Offline,
		r.OverLimit, r.Unconverged, r.Missing, r.Duplicates, p99(r.P99.First, r.P99.Measured), p99(r.P99.Last, r.P99.Measured), Judged(r.Growth), grown,
		b2i(r.RealNode), r.RealMismatches)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Failed says whether the run found a series grown, a version missing or
// duplicated, a service over its history limit or not converged, the
// facade's p99 at the end worse than twice the start's, or the real
// engine holding other containers than its node's instances.
func (r Result) Failed() bool {
	return len(r.Grown) > 0 || r.Missing+r.Duplicates+r.OverLimit+r.Unconverged+r.RealMismatches > 0 || r.P99.Worse
}

// Run performs one soak run. An error is a run that could not be made
// (the system did not come up, the run was interrupted); what the run
// found is in the Result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r := &run{cfg: cfg}
	r.res.Duration, r.res.Nodes = cfg.Duration, cfg.Nodes+cfg.CutNodes
	r.logf = func(format string, args ...any) { fmt.Fprintf(cfg.Log, "soak: "+format+"\n", args...) }
	defer r.stop()
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return r.res, err
	}
	setup := time.Now()
	if err := r.start(ctx); err != nil {
		return r.res, fmt.Errorf("setting up (logs in %s): %w", r.logs, err)
	}
	first, node := &edgev1alpha1.EdgeService{}, &edgev1alpha1.EdgeNode{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: serviceName(0)}, first); err != nil {
		return r.res, err
	}
	if err := r.c.Get(ctx, client.ObjectKey{Name: nodePrefix + "-linux-01"}, node); err != nil {
		return r.res, err
	}
	withReal := ""
	if r.res.RealNode {
		withReal = fmt.Sprintf(" (and the real-engine node with %d)", cfg.RealServices)
	}
	r.logf("%d nodes online and %d services running%s after %v; churn and faults for %v", cfg.Nodes+cfg.CutNodes, cfg.Services, withReal,
		time.Since(setup).Round(time.Second), cfg.Duration)

	var readers, console Latencies
	var samples Samples
	var limits LimitWatch
	r.mu.Lock()
	r.began, r.churning = time.Now(), true
	r.mu.Unlock()
	churning, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { r.churn(churning, ctx) })
	wg.Go(func() { r.realChurn(churning) })
	wg.Go(func() { r.ephemerals(churning) })
	wg.Go(func() { r.faults(churning) })
	wg.Go(func() { r.readers(churning, &readers, string(first.UID), string(node.UID)) })
	wg.Go(func() { r.console(churning, &console, string(first.UID), first.Name) })
	wg.Go(func() { r.sampler(ctx, &samples, &limits) })
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return r.res, err
	}
	r.mu.Lock()
	r.churning = false
	r.mu.Unlock()

	r.logf("churn over; waiting up to %v for every service to settle", cfg.Timeout)
	wait, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	unsettled := 0
	err := procs.WaitFor(wait, "every service settled", time.Second, func() (bool, error) {
		n, err := r.unsettled(ctx)
		unsettled = n
		return err == nil && n == 0, nil
	})
	if ctx.Err() != nil {
		return r.res, ctx.Err()
	}
	if err != nil {
		r.res.Unconverged = unsettled
		r.logf("%d services not settled after %v", unsettled, cfg.Timeout)
	}
	// The run's watch may be a moment behind what was just listed.
	time.Sleep(3 * time.Second)
	var notes []string
	r.res.Missing, r.res.Duplicates, notes = r.ledger.Check()
	for i, n := range notes {
		if i == 20 {
			r.logf("... and %d more", len(notes)-20)
			break
		}
		r.logf("%s", n)
	}
	over := limits.Over()
	if now, err := r.overLimit(ctx, r.c); err == nil {
		for uid, note := range now {
			over[uid] = note
		}
	} else {
		r.logf("records at the end not counted: %v", err)
	}
	r.res.OverLimit = len(over)
	for _, note := range over {
		r.logf("over its history limit: %s", note)
	}
	if r.res.RealNode {
		r.res.RealMismatches = r.checkEngine(ctx)
		r.logf("real node: %d changes of its %d services; %d mismatches between its engine's containers and its instances", r.res.RealChanges, cfg.RealServices, r.res.RealMismatches)
	}

	w := Window(cfg.Duration)
	r.res.P99 = CompareP99(readers.Between(0, w), readers.Between(cfg.Duration-w, cfg.Duration))
	r.res.FacadeOK, r.res.FacadeFail = readers.Counts()
	r.res.ConsoleOK, r.res.ConsoleErr = console.Counts()
	r.res.Growth = Judge(samples.All(), Warmup)
	r.res.Grown = Grown(r.res.Growth)
	r.mu.Lock()
	r.res.Offline = len(r.offline)
	r.res.ManagerExits = r.managers.Exited()
	for _, n := range r.offline {
		r.logf("declared offline: %s", n)
	}
	r.mu.Unlock()

	var table strings.Builder
	if err := Table(&table, samples.All(), r.res.Growth, Warmup.Minutes()); err != nil {
		return r.res, err
	}
	fmt.Fprintf(cfg.Log, "\nevery series after the first %v, fitted by least squares (docs/soak.md):\n%s", Warmup, table.String())
	cp99, _ := P99(console.Between(0, cfg.Duration))
	readersLine := fmt.Sprintf("facade readers: p99 %v in the first %v, %v in the last (%d answered, %d failed); the console's polling: p99 %v (%d answered, %d failed)",
		r.res.P99.First, w, r.res.P99.Last, r.res.FacadeOK, r.res.FacadeFail, cp99, r.res.ConsoleOK, r.res.ConsoleErr)
	fmt.Fprintf(cfg.Log, "\n%s\n", readersLine)
	if err := WriteFigures(cfg.Out, &samples, Warmup.Minutes()); err != nil {
		return r.res, err
	}
	if cfg.FiguresPage != "" {
		if err := writeFiguresPage(cfg, r.res, table.String(), readersLine); err != nil {
			return r.res, err
		}
	}
	if Judged(r.res.Growth) == 0 {
		r.logf("no series judged: a run must go on well past the %v warm-up for its growth to say anything", Warmup)
	}
	r.logf("samples.csv and a plot per series in %s, every process's log in %s", cfg.Out, r.logs)
	return r.res, nil
}
