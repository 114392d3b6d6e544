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
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// pauseAfter is how long a paused change runs before its rollout is
// paused (its canary under way), pauseHold how long it stays paused.
const (
	pauseAfter = 2 * time.Second
	pauseHold  = 20 * time.Second
)

// count changes the result's counters.
func (r *run) count(f func(*Result)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.res)
}

// churnErr counts a failed action, and says the first few.
func (r *run) churnErr(what string, err error) {
	r.mu.Lock()
	r.res.ChurnErrors++
	n := r.res.ChurnErrors
	r.mu.Unlock()
	if n <= 20 {
		r.logf("churn: %s: %v", what, err)
	}
}

// churn acts on the long-lived services at Rate until ctx ends, then
// waits for the rollouts it paused to be resumed (with base, the run's
// own context).
func (r *run) churn(ctx, base context.Context) {
	var held sync.WaitGroup
	defer held.Wait()
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.Rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c, s := Action(i, r.cfg.Services)
		if s < 0 {
			continue
		}
		if err := r.act(ctx, base, c, s, i, &held); err != nil && ctx.Err() == nil {
			r.churnErr(fmt.Sprintf("%s of %s", c, serviceName(s)), err)
		}
	}
}

// act makes the i-th action, c, on long-lived service s.
func (r *run) act(ctx, base context.Context, c Change, s, i int, held *sync.WaitGroup) error {
	name := serviceName(s)
	svc := &edgev1alpha1.EdgeService{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc); err != nil {
		return err
	}
	// A failing image rolled out: its rollback is the manager's to make.
	// Another tag of it would fail again.
	if strings.HasPrefix(string(svc.Spec.Image.Ref), badImage+"@") && (c == ChangeVersion || c == ChangeBadImage) {
		c = ChangeEnv
	}
	changed := func() { r.count(func(res *Result) { res.Changes++ }) }
	switch c {
	case ChangeEnv:
		if err := r.edit(ctx, name, func(spec *edgev1alpha1.EdgeServiceSpec) { setChange(spec, i) }); err != nil {
			return err
		}
		changed()
	case ChangeVersion:
		if err := r.write(ctx, "PATCH", "/api/v1/service/"+string(svc.UID), map[string]any{"imageVersion": strconv.Itoa(i)}, nil); err != nil {
			return err
		}
		changed()
	case ChangeScale:
		factor := 3
		if ptr.Deref(svc.Spec.Factor, 2) == 3 {
			factor = 2
		}
		if err := r.write(ctx, "PATCH", "/api/v1/service/"+string(svc.UID), map[string]any{"factor": factor}, nil); err != nil {
			return err
		}
		changed()
	case ChangePause:
		if err := r.edit(ctx, name, func(spec *edgev1alpha1.EdgeServiceSpec) { setChange(spec, i) }); err != nil {
			return err
		}
		changed()
		held.Go(func() { r.pause(base, name) })
	case ChangeRollback:
		rec, err := r.previousRecord(ctx, svc)
		if err != nil || rec == nil {
			return err // nothing to return to yet
		}
		var out struct {
			Changed bool `json:"changed"`
		}
		if err := r.write(ctx, "POST", "/api/v1/service/"+string(svc.UID)+"/rollback", map[string]any{"recordId": string(rec.UID)}, &out); err != nil {
			return err
		}
		if out.Changed {
			r.count(func(res *Result) { res.Rollbacks++; res.Changes++ })
		}
	case ChangeBadImage:
		if err := r.edit(ctx, name, func(spec *edgev1alpha1.EdgeServiceSpec) {
			spec.Image.Ref = edgev1alpha1.ImageRef(fmt.Sprintf("%s@%d#linux", badImage, i))
		}); err != nil {
			return err
		}
		r.count(func(res *Result) { res.BadImages++; res.Changes++ })
	}
	return nil
}

// pause pauses a service's rollout just after a change, once its canary
// is under way, and resumes it pauseHold later.
func (r *run) pause(ctx context.Context, name string) {
	time.Sleep(pauseAfter)
	set := func(paused bool) error {
		return r.edit(ctx, name, func(spec *edgev1alpha1.EdgeServiceSpec) { spec.Paused = paused })
	}
	if err := set(true); err != nil {
		r.churnErr("pausing "+name, err)
		return
	}
	r.count(func(res *Result) { res.Pauses++ })
	time.Sleep(pauseHold)
	// Resumed whatever it takes: a service left paused never settles.
	if err := retry.OnError(retry.DefaultBackoff, func(error) bool { return ctx.Err() == nil }, func() error { return set(false) }); err != nil {
		r.churnErr("resuming "+name, err)
	}
}

// setChange gives the containers' environment the action's number.
func setChange(spec *edgev1alpha1.EdgeServiceSpec, i int) {
	if spec.Config == nil {
		spec.Config = &edgev1alpha1.ServiceConfig{}
	}
	if spec.Config.Linux == nil {
		spec.Config.Linux = &edgev1alpha1.LinuxConfig{}
	}
	spec.Config.Linux.Env = []string{"CHANGE=" + strconv.Itoa(i)}
}

// edit changes a service's spec through the API, as kubectl edit does.
func (r *run) edit(ctx context.Context, name string, change func(*edgev1alpha1.EdgeServiceSpec)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &edgev1alpha1.EdgeService{}
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
			return err
		}
		change(&s.Spec)
		return r.c.Update(ctx, s)
	})
}

// previousRecord is the newest record of svc before its current revision
// whose image does not fail: what a person rolls back to.
func (r *run) previousRecord(ctx context.Context, svc *edgev1alpha1.EdgeService) (*edgev1alpha1.DeployRecord, error) {
	list := &edgev1alpha1.DeployRecordList{}
	if err := r.view.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{edgev1alpha1.LabelServiceUID: string(svc.UID)}); err != nil {
		return nil, err
	}
	var best *edgev1alpha1.DeployRecord
	for i := range list.Items {
		rec := &list.Items[i]
		if rec.Spec.Revision < svc.Status.Revision && !strings.HasPrefix(string(rec.Spec.Image.Ref), badImage+"@") &&
			(best == nil || rec.Spec.Revision > best.Spec.Revision) {
			best = rec
		}
	}
	return best, nil
}
