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

// Package edgeservice reconciles EdgeServices: placement of their
// instances on nodes (placement.go), rollouts in waves (rollout.go), one
// DeployRecord per configuration (records.go) and the nodes' assignments
// (assignments.go, written by package assignment).
package edgeservice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/edgenode"
	"github.com/edgeplane/edgeplane/controllers/edgeservice/assignment"
	"github.com/edgeplane/edgeplane/controllers/internal/conditions"
	"github.com/edgeplane/edgeplane/controllers/internal/patch"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/instances"
	"github.com/edgeplane/edgeplane/internal/shared/metapatch"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/shared/text"
)

// Reconciler places a service's instances on nodes, follows their
// deployment through the agents' reports, and appends a DeployRecord for
// every change of the service's deployment configuration.
type Reconciler struct {
	client.Client
	// APIReader reads past the cache, to settle a create that met AlreadyExists.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	Clock     clock.PassiveClock
	// RescheduleGrace is how long a node may stay offline before the
	// instances of dynamic services move off it.
	RescheduleGrace time.Duration
	// DeletionTimeout bounds how long a deleted service waits for agents to
	// remove its containers.
	DeletionTimeout time.Duration
	// StatusHold is how long a status write that only tells of a healthy
	// rollout of a spec change may wait for the one that sees it done
	// (0: none).
	StatusHold time.Duration
	// Informers, when set, lets placement read every node from the
	// informer's store itself: a List would copy each node's struct.
	Informers cache.Informers

	history *configHistory
	load    *nodeLoad
	// placing makes a placement and its reservation of the nodes' room
	// one step: services reconciled at once never both take a node's
	// last room, or all pick the same lightest node.
	placing   sync.Mutex
	unplaced  *unplaced
	intents   *intents
	writer    *assignment.Writer
	meta      *metapatch.Client
	followUps *followUps
	holds     *statusHolds
}

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgeservices,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgeservices/status,verbs=get;patch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgeservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=deployrecords,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgenodes,verbs=get;list;watch

// Reconcile runs the phases of one service: finalizer, placement, records,
// instance status, labels, status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := &edgev1alpha1.EdgeService{}
	if err := r.Get(ctx, req.NamespacedName, svc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if svc.DeletionTimestamp != nil {
		return r.finalize(ctx, svc)
	}
	start, now := time.Now(), r.Clock.Now()

	stored, err := r.assignmentsOf(ctx, svc)
	if err != nil {
		return ctrl.Result{}, err
	}
	meantBefore, meant := r.intents.get(svc.UID)
	entries := meantBefore
	if !meant {
		entries = stored
	}
	existing := existingInstances(svc, entries)
	nodes, err := r.nodesFor(ctx, svc, existing)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.placing.Lock()
	p, err := r.place(svc, existing, nodes, now, func() ([]*edgev1alpha1.EdgeNode, error) { return r.everyNode(ctx) })
	if err == nil {
		r.load.set(svc.UID, p.instances)
	}
	r.placing.Unlock()
	if err != nil {
		return ctrl.Result{}, err
	}
	r.unplaced.mark(req.NamespacedName, int32(len(p.instances)) < p.desired)

	records, err := r.listRecords(ctx, svc)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Revisions are numbered from what the API server holds, never from
	// this process's memory: another manager may have moved on.
	current, err := r.syncRecords(ctx, svc, existingInstances(svc, stored), records, func(spec edgev1alpha1.EdgeServiceSpec) []edgev1alpha1.RecordNode {
		return recordNodes(spec, p.instances, nodes)
	})
	if errors.Is(err, errStaleService) {
		// The watch brings the newer service and queues it; this is in
		// case it came before this reconcile began.
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	ro := rolloutOf(svc, p.instances, entries, nodes, current, records, now)
	status, all := desiredStatus(svc, p, nodes, current, ro, now)

	if err := r.syncMeta(ctx, svc, status.Containers); err != nil {
		return ctrl.Result{}, err
	}
	// After the finalizer, which must hold the service before any node
	// can run it.
	assigned := assignedEntries(svc, all, ro.revisions)
	// Meant from now on, written or not: a retry places from here.
	r.intents.set(svc.UID, assigned)
	// The writes are left to the writer, which folds those of many
	// services into one per node; a service whose last write failed waits
	// for this one, says why in its status and backs off while it fails.
	key := edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)
	waits := r.writer.Failing(key)
	writeErr := r.syncAssignments(ctx, svc, stored, meantBefore, assigned, waits)
	if msg := r.writer.Failure(key); msg != "" {
		p.problems = append(p.problems, msg)
		status, _ = desiredStatus(svc, p, nodes, current, ro, now)
	}
	// Placement sees this at once, not when the watch brings it.
	r.load.set(svc.UID, all)
	// A write that only tells of progress waits a little for the one that
	// sees the instances run (progressOnly).
	changed, held := !equality.Semantic.DeepEqual(status, &svc.Status), time.Duration(0)
	if changed {
		held = r.holds.left(req.NamespacedName, progressOnly(&svc.Status, status), now)
	} else {
		r.holds.written(req.NamespacedName)
	}
	if changed && held == 0 {
		before := svc.Status.DeepCopy()
		base := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
		svc.Status = *status
		// Answered with the service's metadata alone: the status is
		// what was just sent, and kube-apiserver spares encoding it.
		if err := r.patcher().Patch(ctx, svc, base, metav1.PatchOptions{FieldValidation: metav1.FieldValidationIgnore}, "status"); err != nil {
			return ctrl.Result{}, err
		}
		r.holds.written(req.NamespacedName)
		// Only once the change is written: a retried reconcile would
		// otherwise announce the same transition again.
		r.emitTransitions(svc, before, status)
	}
	if ro.back != nil {
		// After the status, which says why: the rollback is a spec
		// change, recorded as a new revision by the next reconcile.
		if err := r.rollBack(ctx, svc, ro.back, ro.stalled); err != nil {
			return ctrl.Result{}, err
		}
	}

	records, err = r.listRecords(ctx, svc)
	if err != nil {
		return ctrl.Result{}, err
	}
	keep := map[int64]bool{current.Spec.Revision: true, status.DeployedRevision: true}
	for _, nr := range ro.revisions {
		keep[nr.revision] = true
	}
	if err := r.pruneRecords(ctx, svc, records, keep); err != nil {
		return ctrl.Result{}, err
	}
	if writeErr != nil {
		return ctrl.Result{}, writeErr
	}
	if !waits {
		r.followUps.took(req.NamespacedName, time.Since(start))
	}
	return ctrl.Result{RequeueAfter: soonest(soonest(p.recheckIn, ro.recheckIn), held)}, nil
}

// patcher writes the service's status: r.meta, or for a reconciler set
// up without a manager, as some suites make, its client.
func (r *Reconciler) patcher() *metapatch.Client {
	if r.meta != nil {
		return r.meta
	}
	return metapatch.Through(r.Client)
}

// soonest is the shorter of two waits, 0 meaning none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// staleRetry is when a reconcile that read a service older than its
// records runs again.
const staleRetry = time.Second

// nodesFor returns the nodes a reconcile looks at first: the listed nodes
// of a static service and the nodes of existing instances. Placement adds
// every node only when it must choose among them (everyNode): reading
// every node copies each one's struct out of the cache, and most
// reconciles need two.
func (r *Reconciler) nodesFor(ctx context.Context, svc *edgev1alpha1.EdgeService, existing []edgev1alpha1.ServiceInstance) (map[string]*edgev1alpha1.EdgeNode, error) {
	out := map[string]*edgev1alpha1.EdgeNode{}
	nodeNames := append([]string(nil), svc.Spec.Nodes...)
	for _, inst := range existing {
		nodeNames = append(nodeNames, inst.NodeName)
	}
	store, err := r.nodeStore(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range nodeNames {
		if _, done := out[name]; done {
			continue
		}
		if store != nil { // the informer's own object: no copy
			if o, ok, err := store.GetByKey(name); err != nil {
				return nil, err
			} else if n, isNode := o.(*edgev1alpha1.EdgeNode); ok && isNode {
				out[name] = n
			}
			continue
		}
		n := &edgev1alpha1.EdgeNode{}
		if err := r.Get(ctx, types.NamespacedName{Name: name}, n, client.UnsafeDisableDeepCopy); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			continue
		}
		out[name] = n
	}
	return out, nil
}

// everyNode lists every node. Placement only reads them: they are the
// informer's own objects, not copies, and no map of them is built, since
// a first placement reads every node and most of them only once.
func (r *Reconciler) everyNode(ctx context.Context) ([]*edgev1alpha1.EdgeNode, error) {
	store, err := r.nodeStore(ctx)
	if err != nil {
		return nil, err
	}
	if store != nil {
		objs := store.List()
		out := make([]*edgev1alpha1.EdgeNode, 0, len(objs))
		for _, o := range objs {
			if n, ok := o.(*edgev1alpha1.EdgeNode); ok {
				out = append(out, n)
			}
		}
		return out, nil
	}
	list := &edgev1alpha1.EdgeNodeList{}
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*edgev1alpha1.EdgeNode, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// nodeStore is the nodes' informer store, whose objects placement and
// status only read; nil without Informers (then the client's cache reads
// copy).
func (r *Reconciler) nodeStore(ctx context.Context) (toolscache.Store, error) {
	if r.Informers == nil {
		return nil, nil
	}
	inf, err := r.Informers.GetInformer(ctx, &edgev1alpha1.EdgeNode{})
	if err != nil {
		return nil, err
	}
	if s, ok := inf.(interface{ GetStore() toolscache.Store }); ok {
		return s.GetStore(), nil
	}
	return nil, nil
}

// legacyNode says whether a node's agent predates assignments: its
// services follow status.containers, usage figures included.
func legacyNode(n *edgev1alpha1.EdgeNode) bool {
	return n.Status.NodeInfo != nil && !n.Status.NodeInfo.ReadsAssignment
}

// observed finds the container an agent reports for an instance.
func observed(nodes map[string]*edgev1alpha1.EdgeNode, inst edgev1alpha1.ServiceInstance) *edgev1alpha1.ObservedContainer {
	return instances.Observed(nodes[inst.NodeName], inst.TaskID)
}

// desiredStatus is the service's status from its placement, the agents'
// reports on its nodes and its current record, at now: a pure function of
// them, written in one patch when it differs from the status. It also
// returns every instance at the revision its node's entry carries, with
// the deployment status its agent's report gives it.
func desiredStatus(svc *edgev1alpha1.EdgeService, p placement, nodes map[string]*edgev1alpha1.EdgeNode, current *edgev1alpha1.DeployRecord, ro rollout, now time.Time) (*edgev1alpha1.EdgeServiceStatus, []edgev1alpha1.ServiceInstance) {
	st := svc.Status.DeepCopy()
	st.ObservedGeneration = svc.Generation
	st.Revision, st.CurrentRecord = current.Spec.Revision, current.Name
	st.ProgressTime = ro.progress
	all := follow(svc, p.instances, nodes, ro.revisions)
	st.Containers = onLegacyNodes(all, nodes)
	setServiceConditions(svc, st, all, p, ro.rolloutPlan, pullProgress(pullsOf(all, nodes)), now)
	return st, all
}

// onLegacyNodes keeps the instances on nodes whose agent reads its
// instances from status.containers (it predates NodeAssignment).
func onLegacyNodes(all []edgev1alpha1.ServiceInstance, nodes map[string]*edgev1alpha1.EdgeNode) []edgev1alpha1.ServiceInstance {
	var out []edgev1alpha1.ServiceInstance
	for _, inst := range all {
		if n := nodes[inst.NodeName]; n != nil && legacyNode(n) {
			out = append(out, inst)
		}
	}
	return out
}

// pullsOf returns the pulls the service's instances wait on, as their
// nodes' agents report them.
func pullsOf(instances []edgev1alpha1.ServiceInstance, nodes map[string]*edgev1alpha1.EdgeNode) []instancePull {
	var out []instancePull
	for _, inst := range instances {
		if obs := observed(nodes, inst); obs != nil && obs.ImagePull != nil && obs.Revision == inst.Revision {
			out = append(out, instancePull{node: inst.NodeName, pull: *obs.ImagePull})
		}
	}
	return out
}

// instancePull is an image pull one instance waits on.
type instancePull struct {
	node string
	pull edgev1alpha1.ImagePull
}

// pullProgress says how far the pulls of a rollout have come, for the
// Progressing condition: one pull by name and node, several summed.
func pullProgress(pulls []instancePull) string {
	if len(pulls) == 0 {
		return ""
	}
	var done, total int64
	queued := 0
	for _, p := range pulls {
		done, total = done+p.pull.BytesDone, total+p.pull.BytesTotal
		if p.pull.Queued {
			queued++
		}
	}
	if len(pulls) == 1 {
		p := pulls[0]
		if p.pull.Queued {
			return fmt.Sprintf("image %s waits for a pull slot on node %s", p.pull.Image, p.node)
		}
		return fmt.Sprintf("pulling image %s on node %s: %s", p.pull.Image, p.node, bytesOf(done, total))
	}
	msg := fmt.Sprintf("%d instances wait on image pulls: %s", len(pulls), bytesOf(done, total))
	if queued > 0 {
		msg += fmt.Sprintf(", %d of them queued", queued)
	}
	return msg
}

// bytesOf is received of total, in MB with one decimal.
func bytesOf(done, total int64) string {
	if total <= 0 {
		return fmt.Sprintf("%.1f MB received", float64(done)/1e6)
	}
	return fmt.Sprintf("%.1f of %.1f MB (%d%%)", float64(done)/1e6, float64(total)/1e6, done*100/total)
}

// follow moves each instance to the revision its node's entry carries
// and reads its deployment status from the agent's report.
func follow(svc *edgev1alpha1.EdgeService, placed []edgev1alpha1.ServiceInstance, nodes map[string]*edgev1alpha1.EdgeNode, revisions map[string]nodeRevision) []edgev1alpha1.ServiceInstance {
	out := make([]edgev1alpha1.ServiceInstance, 0, len(placed))
	for _, inst := range placed {
		rev := revisions[inst.NodeName].revision
		if inst.Revision != rev {
			inst.Revision = rev
			inst.DeployNum++
		}
		obs := observed(nodes, inst)
		inst.DeployStatus, inst.FailedMessage = instances.Status(rev, svc.Spec.Action, obs)
		if obs != nil {
			inst.CreatedTime = obs.CreatedTime.DeepCopy() // obs is the cache's own
		}
		out = append(out, inst)
	}
	return out
}

// maxFailedShown bounds status.failed: the status stays small whatever
// fails; failedReplicas counts them all.
const maxFailedShown = 20

// setServiceConditions derives replicas and the Available, Progressing and
// Degraded conditions.
func setServiceConditions(svc *edgev1alpha1.EdgeService, st *edgev1alpha1.EdgeServiceStatus, all []edgev1alpha1.ServiceInstance, p placement, plan rolloutPlan, pulls string, now time.Time) {
	st.Replicas, st.ReadyReplicas, st.UpdatedReplicas, st.FailedReplicas, st.Failed = p.desired, 0, 0, 0, nil
	deploying := 0
	var failed []string
	for _, inst := range all {
		if inst.Revision == st.Revision {
			st.UpdatedReplicas++
		}
		switch inst.DeployStatus {
		case edgev1alpha1.DeploySuccess:
			if inst.Revision == st.Revision {
				st.ReadyReplicas++
			}
		case edgev1alpha1.DeployFailure:
			st.FailedReplicas++
			failed = append(failed, fmt.Sprintf("instance %s on node %s: %s", inst.Name, inst.NodeName, inst.FailedMessage))
			if len(st.Failed) < maxFailedShown {
				st.Failed = append(st.Failed, edgev1alpha1.FailedInstance{TaskID: inst.TaskID, Name: inst.Name, NodeName: inst.NodeName,
					Revision: inst.Revision, Message: inst.FailedMessage})
			}
		default:
			deploying++
		}
	}
	// Kept here, in the write that carries the instances, rather than on
	// the record: a record is never written again after its create.
	if st.Replicas > 0 && st.ReadyReplicas >= st.Replicas {
		st.DeployedRevision = max(st.DeployedRevision, st.Revision)
	}
	gen := svc.Generation
	switch {
	case st.Replicas == 0:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionAvailable, metav1.ConditionFalse, edgev1alpha1.ReasonNoInstances, "The service has no instances to run.")
	case st.ReadyReplicas >= st.Replicas:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionAvailable, metav1.ConditionTrue, edgev1alpha1.ReasonAllInstancesReady,
			fmt.Sprintf("All %d instances run revision %d.", st.Replicas, st.Revision))
	default:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionAvailable, metav1.ConditionFalse, edgev1alpha1.ReasonInstancesNotReady,
			fmt.Sprintf("%d of %d instances run revision %d.", st.ReadyReplicas, st.Replicas, st.Revision))
	}
	switch {
	case plan.stalled != nil:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionProgressing, metav1.ConditionFalse, plan.stalled.Reason, plan.stalled.Message+".")
	case deploying > 0:
		msg := fmt.Sprintf("%d instances are being deployed at revision %d.", deploying, st.Revision)
		if pulls != "" {
			msg = strings.TrimSuffix(msg, ".") + "; " + pulls + "."
		}
		if plan.waiting != "" {
			msg = strings.TrimSuffix(msg, ".") + "; " + plan.waiting + "."
		}
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionProgressing, metav1.ConditionTrue, edgev1alpha1.ReasonDeploying, msg)
	case svc.Spec.Paused && plan.waiting != "":
		// As a paused Deployment says it: neither progressing nor not.
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionProgressing, metav1.ConditionUnknown, edgev1alpha1.ReasonRolloutPaused, plan.waiting+".")
	case plan.waiting != "":
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionProgressing, metav1.ConditionTrue, edgev1alpha1.ReasonRollingUpdate, plan.waiting+".")
	default:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionProgressing, metav1.ConditionFalse, edgev1alpha1.ReasonRolloutComplete,
			fmt.Sprintf("No instance is being deployed; revision %d is current.", st.Revision))
	}
	switch {
	case len(p.problems) > 0:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionDegraded, metav1.ConditionTrue, edgev1alpha1.ReasonPlacementFailed,
			"Cannot place every instance: "+conditions.CapList(p.problems)+".")
	case len(failed) > 0:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionDegraded, metav1.ConditionTrue, edgev1alpha1.ReasonDeployFailed,
			"Deployment failed for "+conditions.CapList(failed))
	default:
		st.Conditions = conditions.Set(st.Conditions, now, gen, edgev1alpha1.ConditionDegraded, metav1.ConditionFalse, edgev1alpha1.ReasonAsExpected, "Every instance is placed and none failed.")
	}
	st.Conditions = conditions.Summarize(st.Conditions, now, gen, serviceFailure(st.Conditions), serviceProgress(st.Conditions))
}

// serviceFailure is what makes a service Stalled: a rollout stopped
// (Progressing False for its deadline or its canary), else Degraded.
func serviceFailure(conds []metav1.Condition) *conditions.Problem {
	if c := meta.FindStatusCondition(conds, edgev1alpha1.ConditionProgressing); c != nil && c.Status == metav1.ConditionFalse &&
		(c.Reason == edgev1alpha1.ReasonProgressDeadlineExceeded || c.Reason == edgev1alpha1.ReasonCanaryFailed) {
		return conditions.ProblemOf(c)
	}
	if c := meta.FindStatusCondition(conds, edgev1alpha1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		return conditions.ProblemOf(c)
	}
	return nil
}

// serviceProgress is what keeps a service Reconciling: a rollout under way,
// or instances not yet available for any other reason.
func serviceProgress(conds []metav1.Condition) *conditions.Problem {
	if c := meta.FindStatusCondition(conds, edgev1alpha1.ConditionProgressing); c != nil && c.Status != metav1.ConditionFalse {
		return conditions.ProblemOf(c)
	}
	if c := meta.FindStatusCondition(conds, edgev1alpha1.ConditionAvailable); c != nil && c.Status != metav1.ConditionTrue {
		return conditions.ProblemOf(c)
	}
	return nil
}

// emitTransitions records Events for what changed for the worse.
func (r *Reconciler) emitTransitions(svc *edgev1alpha1.EdgeService, was, is *edgev1alpha1.EdgeServiceStatus) {
	before := map[string]int64{}
	for _, f := range was.Failed {
		before[f.TaskID] = f.Revision
	}
	for _, f := range is.Failed {
		if rev, ok := before[f.TaskID]; !ok || rev != f.Revision {
			r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, edgev1alpha1.ReasonDeployFailed, "Deploy", "%s",
				text.Cut(fmt.Sprintf("Instance %s on node %s failed at revision %d: %s", f.Name, f.NodeName, f.Revision, f.Message), conditions.MaxEventNote))
		}
	}
	if p := serviceFailure(is.Conditions); p != nil && (p.Reason == edgev1alpha1.ReasonProgressDeadlineExceeded || p.Reason == edgev1alpha1.ReasonCanaryFailed) {
		if q := serviceFailure(was.Conditions); q == nil || q.Reason != p.Reason {
			r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, p.Reason, "Rollout", "%s", text.Cut("Rollout stalled: "+p.Message, conditions.MaxEventNote))
		}
	}
	old := meta.FindStatusCondition(was.Conditions, edgev1alpha1.ConditionDegraded)
	now := meta.FindStatusCondition(is.Conditions, edgev1alpha1.ConditionDegraded)
	if now != nil && now.Reason == edgev1alpha1.ReasonPlacementFailed && (old == nil || old.Message != now.Message) {
		r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, edgev1alpha1.ReasonPlacementFailed, "Place", "%s", text.Cut(now.Message, conditions.MaxEventNote))
	}
}

// syncMeta writes the finalizer and the placement labels, one label per
// node whose agent predates NodeAssignment and has instances of the
// service (such an agent watches its services by it), in one patch. It
// runs before any node is told of an instance, so the finalizer holds
// the service before a container can exist. The resourceVersion in the
// patch keeps finalizers and labels others added meanwhile: a stale copy
// becomes a conflict.
func (r *Reconciler) syncMeta(ctx context.Context, svc *edgev1alpha1.EdgeService, legacy []edgev1alpha1.ServiceInstance) error {
	placed := map[string]bool{}
	for _, inst := range legacy {
		placed[names.PlacementLabel(inst.NodeName)] = true
	}
	changed := !controllerutil.ContainsFinalizer(svc, edgev1alpha1.FinalizerContainers)
	for k := range svc.Labels {
		if strings.HasPrefix(k, names.PlacementLabelPrefix) && !placed[k] {
			changed = true
		}
	}
	for k := range placed {
		if _, ok := svc.Labels[k]; !ok {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	base := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(svc, edgev1alpha1.FinalizerContainers)
	for k := range svc.Labels {
		if strings.HasPrefix(k, names.PlacementLabelPrefix) && !placed[k] {
			delete(svc.Labels, k)
		}
	}
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	for k := range placed {
		svc.Labels[k] = ""
	}
	if err := r.Patch(ctx, svc, base); err != nil {
		return fmt.Errorf("patching the finalizer and placement labels: %w", err)
	}
	return nil
}

// finalize lets a deleted service go once agents report its containers gone,
// at the deletion timeout, or at once when force-deleted.
func (r *Reconciler) finalize(ctx context.Context, svc *edgev1alpha1.EdgeService) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(svc, edgev1alpha1.FinalizerContainers) {
		return ctrl.Result{}, nil
	}
	log := logf.FromContext(ctx)
	meant, _ := r.intents.get(svc.UID) // writes still queued follow
	entries, err := r.assignmentsOf(ctx, svc)
	if err != nil {
		return ctrl.Result{}, err
	}
	remaining, err := r.containersLeft(ctx, svc, entries)
	if err != nil {
		return ctrl.Result{}, err
	}
	waited := r.Clock.Since(svc.DeletionTimestamp.Time)
	_, forced := svc.Annotations[edgev1alpha1.AnnotationForceDelete]
	switch {
	case forced:
		log.Info("Force-deleting service", "containersLeft", remaining)
	case remaining == 0:
	case waited >= r.DeletionTimeout:
		log.Info("Deletion timed out waiting for containers", "containersLeft", remaining, "timeout", r.DeletionTimeout)
		r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, "DeletionTimedOut", "Delete",
			"%d containers were still reported after %s; deleting the service anyway", remaining, r.DeletionTimeout)
	default:
		// Each node's agent removes the containers of an entry marked
		// deleting; the entry stays until they are reported gone.
		deleting := map[string]edgev1alpha1.AssignedService{}
		for node, e := range entries {
			e.Deleting = true
			deleting[node] = e
		}
		if err := r.syncAssignments(ctx, svc, entries, meant, deleting, true); err != nil {
			return ctrl.Result{}, err
		}
		r.intents.set(svc.UID, deleting)
		return ctrl.Result{RequeueAfter: r.DeletionTimeout - waited}, nil
	}
	if err := r.syncAssignments(ctx, svc, entries, meant, nil, true); err != nil {
		return ctrl.Result{}, err
	}
	if err := patch.SetFinalizer(ctx, r.Client, svc, edgev1alpha1.FinalizerContainers, false); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.history.drop(svc.UID)
	r.intents.drop(svc.UID)
	r.writer.DropService(edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name))
	return ctrl.Result{}, nil
}

// SetupWithManager wires the reconciler to services, their records and the
// nodes they run on.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	r.history, r.load, r.unplaced, r.intents, r.followUps = newConfigHistory(), newNodeLoad(), newUnplaced(), new(intents), newFollowUps()
	r.holds = newStatusHolds(r.StatusHold)
	// A write that starts to fail wakes its service, which then says why.
	failed := make(chan event.GenericEvent, 1024)
	var err error
	if r.meta, err = metapatch.New(r.Client, mgr.GetConfig(), mgr.GetHTTPClient()); err != nil {
		return err
	}
	r.writer = assignment.NewWriter(r.Client, r.meta, r.APIReader, func(key string) {
		if ns, name, ok := strings.Cut(key, "/"); ok {
			select { // never held up: a full channel means wakes are on their way
			case failed <- event.GenericEvent{Object: &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}:
			default:
			}
		}
	})
	if err := mgr.Add(r.writer); err != nil {
		return err
	}
	if err := r.keepHistory(ctx, mgr.GetCache()); err != nil {
		return err
	}
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(q queue, o client.Object) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("edgeservice").
		WithOptions(opts).
		// On the leader, every version the watch delivers also goes into the
		// history right before the request is queued, so that a reconcile
		// never runs ahead of the history it reads.
		Watches(&edgev1alpha1.EdgeService{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
				r.history.addVersion(e.Object.(*edgev1alpha1.EdgeService))
				enqueue(q, e.Object)
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
				r.history.addVersion(e.ObjectNew.(*edgev1alpha1.EdgeService))
				if statusOnly(e.ObjectOld, e.ObjectNew) { // mostly our own patch, back
					r.followUps.add(q, client.ObjectKeyFromObject(e.ObjectNew))
					return
				}
				enqueue(q, e.ObjectNew)
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
				r.followUps.dropService(client.ObjectKeyFromObject(e.Object))
				r.holds.written(client.ObjectKeyFromObject(e.Object))
				r.history.drop(e.Object.GetUID())
				r.load.drop(e.Object.GetUID())
				r.intents.drop(e.Object.GetUID())
				r.writer.DropService(edgev1alpha1.AssignmentKey(e.Object.GetNamespace(), e.Object.GetName()))
				r.unplaced.mark(client.ObjectKeyFromObject(e.Object), false)
				r.wakeUnplaced(q)
			},
			GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { enqueue(q, e.Object) },
		}).
		// A record wakes the service it names, owned or not, so that orphans
		// are adopted and tampering is repaired.
		Watches(&edgev1alpha1.DeployRecord{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			rec := o.(*edgev1alpha1.DeployRecord)
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: rec.Namespace, Name: rec.Spec.ServiceName}}}
		})).
		// An assignment someone else changed or deleted is rewritten by
		// the services whose entries differ.
		Watches(&edgev1alpha1.NodeAssignment{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
				r.assignmentChanged(q, &edgev1alpha1.NodeAssignment{}, e.Object.(*edgev1alpha1.NodeAssignment))
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
				r.assignmentChanged(q, e.ObjectOld.(*edgev1alpha1.NodeAssignment), e.ObjectNew.(*edgev1alpha1.NodeAssignment))
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
				if a, ok := e.Object.(*edgev1alpha1.NodeAssignment); ok {
					r.assignmentChanged(q, a, &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: a.Name}})
				}
			},
		}).
		WatchesRawSource(source.Channel(failed, &handler.EnqueueRequestForObject{})).
		Watches(&edgev1alpha1.EdgeNode{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
				r.enqueueForNode(ctx, q, nil, e.Object.(*edgev1alpha1.EdgeNode))
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
				r.enqueueForNode(ctx, q, e.ObjectOld.(*edgev1alpha1.EdgeNode), e.ObjectNew.(*edgev1alpha1.EdgeNode))
			},
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
				r.enqueueForNode(ctx, q, nil, e.Object.(*edgev1alpha1.EdgeNode))
			},
		}).
		Complete(r)
}

// keepHistory feeds the history from the cache's informers, which run on
// every replica: services add versions, records trim them. The
// controller's own watch starts only on the leader.
func (r *Reconciler) keepHistory(ctx context.Context, c cache.Cache) error {
	services, err := c.GetInformer(ctx, &edgev1alpha1.EdgeService{})
	if err != nil {
		return err
	}
	service := func(o any) *edgev1alpha1.EdgeService {
		if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		s, _ := o.(*edgev1alpha1.EdgeService)
		return s
	}
	if _, err := services.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if s := service(o); s != nil {
				r.history.addVersion(s)
			}
		},
		UpdateFunc: func(_, o any) {
			if s := service(o); s != nil {
				r.history.addVersion(s)
			}
		},
		DeleteFunc: func(o any) {
			if s := service(o); s != nil {
				r.history.drop(s.UID)
			}
		},
	}); err != nil {
		return err
	}
	records, err := c.GetInformer(ctx, &edgev1alpha1.DeployRecord{})
	if err != nil {
		return err
	}
	recorded := func(o any) {
		if rec, ok := o.(*edgev1alpha1.DeployRecord); ok {
			r.history.forgetRecorded(rec)
		}
	}
	_, err = records.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    recorded,
		UpdateFunc: func(_, o any) { recorded(o) },
	})
	return err
}

// wakeUnplaced queues the services left short of instances: room freed.
func (r *Reconciler) wakeUnplaced(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	for _, k := range r.unplaced.keys() {
		q.Add(reconcile.Request{NamespacedName: k})
	}
}

// enqueueForNode queues the services a node change can matter to: those
// with instances on it, those that list it, and, when the node's state,
// type or labels changed, every dynamic service.
func (r *Reconciler) enqueueForNode(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], old, n *edgev1alpha1.EdgeNode) {
	lists := []client.MatchingFields{{index.ServiceByNode: n.Name}}
	// Room on the node: the services short of instances may take it.
	if old == nil || capacityOf(n) > capacityOf(old) || n.Status.ContainerManagedTotal < old.Status.ContainerManagedTotal {
		r.wakeUnplaced(q)
	}
	// A report of containers only follows the progress of the services
	// on the node; a change of its state, type or labels changes where
	// instances go.
	add := func(key types.NamespacedName) { r.followUps.add(q, key) }
	// Nil: every service on the node follows; else those with an
	// instance among these tasks.
	var tasks map[string]bool
	if old == nil || old.Status.Status != n.Status.Status || edgenode.Available(old) != edgenode.Available(n) || nodeOS(old) != nodeOS(n) || !equality.Semantic.DeepEqual(old.Labels, n.Labels) {
		lists = append(lists, client.MatchingFields{index.ServiceBySpecNode: n.Name}, client.MatchingFields{index.ServiceByPolicy: string(edgev1alpha1.PolicyDynamic)})
		add = func(key types.NamespacedName) { q.Add(reconcile.Request{NamespacedName: key}) }
	} else if equality.Semantic.DeepEqual(old.Status.Containers, n.Status.Containers) {
		return
	} else if !legacyNode(n) {
		// Usage figures alone matter to no service.
		if tasks = changedTasks(old.Status.Containers, n.Status.Containers); len(tasks) == 0 {
			return
		}
	}
	// The services on the node: in its assignment, and (agents that
	// predate assignments) in status.containers. A report of one
	// container follows its service alone, not the node's every service.
	a := &edgev1alpha1.NodeAssignment{}
	if err := r.Get(ctx, types.NamespacedName{Name: n.Name}, a, client.UnsafeDisableDeepCopy); client.IgnoreNotFound(err) != nil {
		logf.FromContext(ctx).Error(err, "Reading the node's assignment", "node", n.Name)
	}
	for key, e := range a.Spec.Services {
		if k, ok := serviceKey(key); ok && (tasks == nil || followsTasks(e, tasks)) {
			add(k)
		}
	}
	for _, sel := range lists {
		services := &edgev1alpha1.EdgeServiceList{}
		if err := r.List(ctx, services, sel); err != nil {
			logf.FromContext(ctx).Error(err, "Listing services for a node change", "node", n.Name)
			continue
		}
		for i := range services.Items {
			add(client.ObjectKeyFromObject(&services.Items[i]))
		}
	}
}
