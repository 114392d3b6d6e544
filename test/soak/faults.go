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
	"time"

	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// faults injects the planned faults one after another, each at its
// moment of the churn (Timeline), until ctx ends.
func (r *run) faults(ctx context.Context) {
	plan := Timeline(r.cfg.Duration, map[Fault]time.Duration{
		FaultFailover: r.cfg.FailoverEvery, FaultCut: r.cfg.CutEvery, FaultPause: r.cfg.PauseEvery})
	cuts := 0
	for _, p := range plan {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(r.began.Add(p.At))):
		}
		var err error
		switch p.Fault {
		case FaultFailover:
			err = r.failover(ctx)
		case FaultCut:
			err = r.cut(ctx, cuts)
			cuts++
		case FaultPause:
			err = r.pauseAPIServer(ctx)
		}
		if err != nil && ctx.Err() == nil {
			r.logf("%s at %v: %v", p.Fault, p.At.Round(time.Second), err)
		}
	}
}

// failover SIGKILLs the leading manager once the other has synced (a
// kill then tests the failover, not a start-up:
// docs/design/0009-every-version-recorded-through-failover.md) and times
// until the other leads.
func (r *run) failover(ctx context.Context) error {
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	leader := -1
	if err := procs.WaitFor(wait, "a leader and a synced standby", 500*time.Millisecond, func() (bool, error) {
		i, err := r.managers.Leader(ctx)
		if err != nil || !r.managers.Ready(ctx, 1-i) {
			return false, nil
		}
		leader = i
		return true, nil
	}); err != nil {
		return err
	}
	killed := time.Now()
	if err := r.managers.Kill(leader); err != nil {
		return err
	}
	if err := procs.WaitFor(wait, "the standby leading", 200*time.Millisecond, func() (bool, error) {
		i, err := r.managers.Leader(ctx)
		return err == nil && i != leader, nil
	}); err != nil {
		return err
	}
	took := time.Since(killed)
	r.count(func(res *Result) { res.Failovers++; res.FailoverMax = max(res.FailoverMax, took) })
	r.logf("failover: manager %d killed, the other led after %.1f s", leader, took.Seconds())
	return nil
}

// cut takes the cut nodes off the hub for CutFor, in turn by stopping
// their agent (SIGSTOP: the process hangs, its connections stay open
// and silent) and by cutting their link (connections dropped, new ones
// refused).
func (r *run) cut(ctx context.Context, n int) error {
	how := "link cut"
	if n%2 == 0 {
		how = "agent stopped"
		if err := procs.Pause(ctx, r.cutAgent.Process.Pid); err != nil {
			return err
		}
		defer func() { _ = procs.Resume(r.cutAgent.Process.Pid) }()
	} else {
		r.link.Cut()
		defer r.link.Restore()
	}
	select {
	case <-ctx.Done():
	case <-time.After(r.cfg.CutFor):
	}
	r.count(func(res *Result) { res.Cuts++ })
	r.logf("cut: %d nodes off for %v (%s)", r.cfg.CutNodes, r.cfg.CutFor, how)
	return nil
}

// pauseAPIServer stops kube-apiserver (SIGSTOP) for PauseFor, as a WAN
// outage looks to every component at once (test/perf/scale's outage).
func (r *run) pauseAPIServer(ctx context.Context) error {
	if err := procs.Pause(ctx, r.apiserverPID); err != nil {
		_ = procs.Resume(r.apiserverPID)
		return err
	}
	select {
	case <-ctx.Done():
	case <-time.After(r.cfg.PauseFor):
	}
	if err := procs.Resume(r.apiserverPID); err != nil {
		return fmt.Errorf("resuming kube-apiserver: %w", err)
	}
	r.count(func(res *Result) { res.APIServerPauses++ })
	r.logf("apiserver: stopped for %v", r.cfg.PauseFor)
	return nil
}
