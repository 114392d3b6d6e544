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

package edgeservice

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/conditions"
	"github.com/edgeplane/edgeplane/controllers/internal/patch"
	"github.com/edgeplane/edgeplane/internal/shared/instances"
	"github.com/edgeplane/edgeplane/internal/shared/records"
	"github.com/edgeplane/edgeplane/internal/shared/text"
)

// rolloutNode is one node's instances of a service as a rollout sees
// them. A node's instances share one entry, so they move together.
type rolloutNode struct {
	name string
	// revision is the node's entry's; 0 for a node with no entry yet.
	revision  int64
	instances int
	// available counts the instances running at revision.
	available int
	// failed counts the instances whose deployment at revision failed.
	failed int
	// legacy: the node's agent predates NodeAssignment and runs what the
	// service's spec says, so its instances move at once.
	legacy bool
}

// rolloutPlan is which nodes run the current revision after this
// reconcile, and why the rollout stopped, if it did.
type rolloutPlan struct {
	// current are the nodes whose entry is at the current revision, those
	// already there included; every other node keeps its entry, and a new
	// node takes the stable revision's.
	current map[string]bool
	// stalled says why no node moves until something changes.
	stalled *conditions.Problem
	// waiting says why nodes that could move wait (paused, the budget).
	waiting string
}

// planRollout decides which nodes move to the current revision, by the
// service's strategy: all at once, or in waves of nodes that keep at
// most maxUnavailable instances unavailable, the first wave a canary
// when one is asked for. A paused rollout moves nothing; one past its
// progress deadline (exceeded says how long it went without progress)
// moves nothing more. A new node takes the current revision unless the
// rollout holds at an earlier one (paused, or moving in waves while a
// stable revision runs elsewhere). deployed says the current revision
// ran on every instance once: its canary is behind it, and a failure
// now is no canary's.
func planRollout(spec *edgev1alpha1.EdgeServiceSpec, current int64, nodes []rolloutNode, exceeded time.Duration, deployed bool) rolloutPlan {
	plan := rolloutPlan{current: map[string]bool{}}
	total, unavailable, updated, updatedReady, failedAtCurrent := 0, 0, 0, 0, 0
	stable := false
	var behind []rolloutNode
	for _, n := range nodes {
		total += n.instances
		unavailable += n.instances - n.available
		switch {
		case n.revision == current || n.legacy:
			plan.current[n.name] = true
			updated += n.instances
			if n.revision == current {
				updatedReady += n.available
				failedAtCurrent += n.failed
			}
		default:
			stable = stable || n.revision > 0
			behind = append(behind, n)
		}
	}
	rolling := spec.Strategy.Type == edgev1alpha1.StrategyRollingUpdate
	// A new node joins the rollout where it holds: at the stable revision
	// while paused or moving in waves, at the current one otherwise.
	newAtCurrent := !stable || (!spec.Paused && !rolling)
	var candidates []rolloutNode
	for _, n := range behind {
		if n.revision == 0 && newAtCurrent {
			plan.current[n.name] = true
			updated += n.instances
			continue
		}
		candidates = append(candidates, n)
	}
	ru := spec.Strategy.RollingUpdate
	if ru == nil {
		ru = &edgev1alpha1.RollingUpdateStrategy{}
	}
	canary := 0
	if rolling {
		canary = scaled(ru.Canary, intstr.FromInt32(0), total, true)
	}
	inCanary := canary > 0 && updatedReady < canary && !deployed
	switch {
	case exceeded > 0:
		plan.stalled = &conditions.Problem{Reason: edgev1alpha1.ReasonProgressDeadlineExceeded, Message: fmt.Sprintf(
			"no instance newly ran revision %d for %s (progressDeadlineSeconds): %d of %d instances run it, %d failed, %d at earlier revisions",
			current, exceeded, updatedReady, total, failedAtCurrent, total-updated)}
		return plan
	case inCanary && failedAtCurrent > 0 && !spec.Paused:
		// Also when the canary is every node of the service: nothing
		// waits for it, but it failed all the same. A paused rollout
		// does nothing, this included.
		plan.stalled = &conditions.Problem{Reason: edgev1alpha1.ReasonCanaryFailed, Message: fmt.Sprintf(
			"%d of the canary's %d instances failed at revision %d; %d of %d instances run it, the rest stay at their revision",
			failedAtCurrent, canary, current, updatedReady, total)}
		return plan
	case len(candidates) == 0:
		return plan
	case spec.Paused:
		plan.waiting = fmt.Sprintf("the rollout is paused at %d of %d instances at revision %d", updated, total, current)
		return plan
	case !rolling:
		for _, n := range candidates {
			plan.current[n.name] = true
		}
		return plan
	}

	maxUnavailable := max(1, scaled(ru.MaxUnavailable, intstr.FromString("25%"), total, false))
	// Nodes that cost the least first: moving an instance that is not
	// running anyway takes nothing from the budget.
	slices.SortFunc(candidates, func(a, b rolloutNode) int {
		return cmp.Or(cmp.Compare(a.available, b.available), cmp.Compare(a.name, b.name))
	})
	budget := maxUnavailable - unavailable
	moved := 0
	for _, n := range candidates {
		if inCanary && updated > 0 && updated+n.instances > canary {
			continue
		}
		// A node with more running instances than maxUnavailable moves
		// alone, once nothing else is unavailable; it would never fit.
		alone := n.available > maxUnavailable && unavailable == 0 && moved == 0
		if n.available > 0 && n.available > budget && !alone {
			continue
		}
		plan.current[n.name] = true
		budget -= n.available
		updated += n.instances
		moved++
	}
	if len(plan.current) < len(nodes) {
		what := fmt.Sprintf("at most %d of %d instances unavailable", maxUnavailable, total)
		if inCanary {
			what = fmt.Sprintf("a canary of %d instances to run revision %d first (%d do)", canary, current, updatedReady)
		}
		plan.waiting = fmt.Sprintf("rolling update: %d of %d instances at revision %d; waiting for %s", updated, total, current, what)
	}
	return plan
}

// scaled is v (else def) as a count of total: a count as it is, a
// percent rounded up or down.
func scaled(v *intstr.IntOrString, def intstr.IntOrString, total int, roundUp bool) int {
	if v == nil {
		v = &def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, roundUp)
	if err != nil { // the schema admits counts and percents only
		return 0
	}
	return n
}

// progressTime is when the rollout of the current revision last made
// progress: when it began (the revision changed, or the rollout was
// resumed), or when more instances came to run it than the status says.
func progressTime(was *edgev1alpha1.EdgeServiceStatus, revision int64, readyAtCurrent int32, resumed bool, now time.Time) *metav1.Time {
	if was.ProgressTime == nil || was.Revision != revision || readyAtCurrent > was.ReadyReplicas || resumed {
		t := metav1.NewTime(now.Truncate(time.Second)) // as the API server stores it
		return &t
	}
	return was.ProgressTime
}

// deadlineLeft is how long the rollout of the current revision has
// left before its progress deadline, from progress (when it last made
// progress); 0 or less once it passed. ok is false when no deadline runs:
// the rollout is paused, or the revision ran everywhere once.
func deadlineLeft(spec *edgev1alpha1.EdgeServiceSpec, progress *metav1.Time, done bool, now time.Time) (left, deadline time.Duration, ok bool) {
	if spec.Paused || done || progress == nil {
		return 0, 0, false
	}
	deadline = time.Duration(deref(spec.ProgressDeadlineSeconds, 600)) * time.Second
	return progress.Add(deadline).Sub(now), deadline, true
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// rollout is where a service's rollout stands after this reconcile:
// the plan, what each node's entry carries, when the rollout last made
// progress, when to look again for its deadline, and the record
// autoRollback returns a stalled rollout to.
type rollout struct {
	rolloutPlan
	revisions map[string]nodeRevision
	progress  *metav1.Time
	recheckIn time.Duration
	back      *edgev1alpha1.DeployRecord
}

// nodeRevision is the revision a node's entry carries, and its
// configuration.
type nodeRevision struct {
	revision int64
	spec     *edgev1alpha1.DeploySpec
}

// rolloutOf plans the rollout of the current revision over placed, the
// service's instances: entries are what the nodes hold of the service,
// recs its records (the configuration of an earlier revision comes from
// its record, not from an entry someone may have edited).
func rolloutOf(svc *edgev1alpha1.EdgeService, placed []edgev1alpha1.ServiceInstance, entries map[string]edgev1alpha1.AssignedService,
	nodes map[string]*edgev1alpha1.EdgeNode, current *edgev1alpha1.DeployRecord, recs []edgev1alpha1.DeployRecord, now time.Time) rollout {
	rev := current.Spec.Revision
	byName := map[string]*rolloutNode{}
	var list []*rolloutNode
	for _, inst := range placed {
		n := byName[inst.NodeName]
		if n == nil {
			n = &rolloutNode{name: inst.NodeName}
			if e, ok := entries[inst.NodeName]; ok {
				n.revision = e.Revision
			}
			if node := nodes[inst.NodeName]; node != nil && legacyNode(node) {
				n.legacy = true
			}
			byName[inst.NodeName] = n
			list = append(list, n)
		}
		if _, ok := entries[inst.NodeName]; !ok {
			n.revision = max(n.revision, inst.Revision) // an instance of status.containers
		}
		n.instances++
	}
	was := &svc.Status
	done := was.DeployedRevision >= rev
	behind := slices.ContainsFunc(list, func(n *rolloutNode) bool { return n.revision != rev && !n.legacy })
	// What each instance runs matters while the revision has not run
	// everywhere (progress, the deadline) and to a rollout in waves with
	// nodes behind (the budget, the canary). A settled service, most of
	// the reconciles of a wide one, skips reading every report here.
	readyAtCurrent := was.ReadyReplicas
	if !done || (svc.Spec.Strategy.Type == edgev1alpha1.StrategyRollingUpdate && behind) {
		readyAtCurrent = 0
		for _, inst := range placed {
			n := byName[inst.NodeName]
			if n.revision == 0 {
				continue
			}
			switch st, _ := instances.Status(n.revision, svc.Spec.Action, observed(nodes, inst)); st {
			case edgev1alpha1.DeploySuccess:
				n.available++
				if n.revision == rev {
					readyAtCurrent++
				}
			case edgev1alpha1.DeployFailure:
				n.failed++
			}
		}
	}
	progressing := meta.FindStatusCondition(was.Conditions, edgev1alpha1.ConditionProgressing)
	resumed := !svc.Spec.Paused && progressing != nil && progressing.Reason == edgev1alpha1.ReasonRolloutPaused
	out := rollout{progress: progressTime(was, rev, readyAtCurrent, resumed, now)}
	left, deadline, ok := deadlineLeft(&svc.Spec, out.progress, done, now)
	exceeded := time.Duration(0)
	switch {
	case ok && left <= 0:
		exceeded = deadline
	case ok:
		out.recheckIn = left
	}
	flat := make([]rolloutNode, 0, len(list))
	for _, n := range list {
		flat = append(flat, *n)
	}
	out.rolloutPlan = planRollout(&svc.Spec, rev, flat, exceeded, done)
	if out.stalled != nil && svc.Spec.Strategy.AutoRollback {
		var why string
		if out.back, why = rollbackTarget(svc, rev, recs); out.back == nil {
			out.stalled.Message += "; autoRollback: " + why
		}
	}

	// What a node that does not move carries: its revision's record, else
	// an entry at that revision; a new node that does not move takes the
	// newest earlier revision running.
	specOf := func(r int64) *edgev1alpha1.DeploySpec {
		if i := slices.IndexFunc(recs, func(rec edgev1alpha1.DeployRecord) bool { return rec.Spec.Revision == r }); i >= 0 {
			return &recs[i].Spec.DeploySpec
		}
		for _, e := range entries {
			if e.Revision == r {
				return &e.Spec
			}
		}
		return &current.Spec.DeploySpec
	}
	stable := nodeRevision{revision: rev, spec: &current.Spec.DeploySpec}
	for _, n := range list {
		if !out.current[n.name] && n.revision > 0 && (stable.revision == rev || n.revision > stable.revision) {
			stable.revision = n.revision
		}
	}
	if stable.revision != rev {
		stable.spec = specOf(stable.revision)
	}
	out.revisions = make(map[string]nodeRevision, len(list))
	for _, n := range list {
		switch {
		case out.current[n.name]:
			out.revisions[n.name] = nodeRevision{revision: rev, spec: &current.Spec.DeploySpec}
		case n.revision == 0:
			out.revisions[n.name] = stable
		default:
			out.revisions[n.name] = nodeRevision{revision: n.revision, spec: specOf(n.revision)}
		}
	}
	return out
}

// rollbackTarget is the record autoRollback returns to: that of the last
// revision every instance ran, when it is older than the current one
// (current: the status may still name the one before, its write held)
// and still kept and restorable; else nil and why not.
func rollbackTarget(svc *edgev1alpha1.EdgeService, current int64, recs []edgev1alpha1.DeployRecord) (*edgev1alpha1.DeployRecord, string) {
	to := svc.Status.DeployedRevision
	if to == 0 || to >= current {
		return nil, "no earlier revision ever ran on every instance"
	}
	i := slices.IndexFunc(recs, func(rec edgev1alpha1.DeployRecord) bool { return rec.Spec.Revision == to })
	if i < 0 {
		return nil, fmt.Sprintf("the record of revision %d, the last that ran on every instance, is gone", to)
	}
	// Said in the stall's condition, once, rather than tried at every
	// reconcile.
	if _, err := records.Restore(svc.Spec.DeepCopy(), &recs[i]); err != nil {
		return nil, err.Error()
	}
	return &recs[i], ""
}

// rollBack writes the configuration of rec into the service's spec, once:
// the resourceVersion in the patch makes a second attempt from a stale
// view (or an edit made meanwhile) a conflict, never a second rollback.
// A record that cannot be restored is said in an Event, not retried.
func (r *Reconciler) rollBack(ctx context.Context, svc *edgev1alpha1.EdgeService, rec *edgev1alpha1.DeployRecord, why *conditions.Problem) error {
	base := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed, err := records.Restore(&svc.Spec, rec)
	if err != nil {
		r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, edgev1alpha1.ReasonRolledBack, "RollBack", "%s", text.Cut("Cannot roll back: "+err.Error(), conditions.MaxEventNote))
		return nil
	}
	if !changed {
		return nil
	}
	from := svc.Status.Revision
	if err := r.Patch(ctx, svc, base, client.FieldOwner(patch.FieldOwner)); err != nil {
		return fmt.Errorf("rolling back to revision %d: %w", rec.Spec.Revision, err)
	}
	logf.FromContext(ctx).Info("Rolled back", "from", from, "to", rec.Spec.Revision, "reason", why.Reason)
	r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, edgev1alpha1.ReasonRolledBack, "RollBack", "%s", text.Cut(fmt.Sprintf(
		"Rolled back from revision %d to the configuration of revision %d, the last that ran on every instance (%s: %s)", from, rec.Spec.Revision, why.Reason, why.Message), conditions.MaxEventNote))
	return nil
}
