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

// Package edgenode reconciles EdgeNodes: whether each node is online,
// from its Lease, and its Ready condition.
package edgenode

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	acmetav1 "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	acv1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/conditions"
	"github.com/edgeplane/edgeplane/controllers/internal/patch"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/shared/unreachable"
)

// Reconciler keeps the controller's half of EdgeNode status: online
// or offline from the node's Lease and the Ready condition (which also says
// when the agent reports its runtime unreachable). The agent's
// half (nodeInfo, bootTime, containers and their counts) is never written
// here.
type Reconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	Clock    clock.PassiveClock
	// LeaseNamespace holds one Lease per node, named after the node.
	LeaseNamespace string
	// GracePeriod is how long a node may go without a renewal the
	// controller observes before it is offline.
	GracePeriod time.Duration
	// APIReader reads a node's Lease past the cache before the node is
	// declared offline.
	APIReader client.Reader

	// renewals are, by node, the last renewTime each Lease carried and when
	// the controller saw it change: liveness is timed by this clock, never
	// by the agent's, as the Kubernetes node lifecycle controller does.
	mu       sync.Mutex
	renewals map[string]renewal
	// blind is set while the controller's own calls to the API server get
	// no answer: it observes no renewals then, through no fault of the
	// nodes'. regained is when it next got an answer: every node's grace
	// period runs from then at the earliest.
	blind    bool
	regained time.Time
}

// renewal is a Lease's renewTime as written and when it was observed.
type renewal struct {
	renewTime time.Time
	seenAt    time.Time
}

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgenodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgenodes/status,verbs=get;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch,namespace=edgeplane-node-lease
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one EdgeNode's controller-owned status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	node := &edgev1alpha1.EdgeNode{}
	if err := r.Get(ctx, req.NamespacedName, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	lease := &coordinationv1.Lease{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: r.LeaseNamespace, Name: node.Name}, lease); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		lease = nil
	}
	state, reason, message, expiresIn, err := r.judge(ctx, node, lease)
	if err != nil {
		return ctrl.Result{}, err
	}

	status := node.Status.DeepCopy()
	status.Status = state
	status.ObservedGeneration = node.Generation
	runtime := meta.FindStatusCondition(node.Status.Conditions, edgev1alpha1.ConditionRuntimeReady)
	readyStatus, readyReason, readyMessage := nodeReady(state, reason, message, runtime)
	status.Conditions = conditions.Set(status.Conditions, r.Clock.Now(), node.Generation, edgev1alpha1.ConditionReady, readyStatus, readyReason, readyMessage)

	if !equality.Semantic.DeepEqual(status, &node.Status) {
		if err := r.applyStatus(ctx, node, status); err != nil {
			r.answered(err)
			return ctrl.Result{}, err
		}
		if was := meta.FindStatusCondition(node.Status.Conditions, edgev1alpha1.ConditionReady); state == edgev1alpha1.NodeOnline &&
			(readyReason == edgev1alpha1.ReasonRuntimeUnreachable) != (was != nil && was.Reason == edgev1alpha1.ReasonRuntimeUnreachable) {
			if readyReason == edgev1alpha1.ReasonRuntimeUnreachable {
				log.Info("Node's runtime is unreachable", "message", readyMessage)
				r.Recorder.Eventf(node, nil, corev1.EventTypeWarning, "RuntimeUnreachable", "Reconcile", "%s", readyMessage)
			} else {
				log.Info("Node's runtime is reachable again")
				r.Recorder.Eventf(node, nil, corev1.EventTypeNormal, "RuntimeReachable", "Reconcile", "The node's container runtime answers again.")
			}
		}
		if node.Status.Status != state {
			log.Info("Node changed state", "from", node.Status.Status, "to", state)
			if state == edgev1alpha1.NodeOnline {
				r.Recorder.Eventf(node, nil, corev1.EventTypeNormal, "NodeOnline", "Reconcile", "Node is online: %s", message)
			} else if node.Status.Status != "" || lease != nil {
				r.Recorder.Eventf(node, nil, corev1.EventTypeWarning, "NodeOffline", "Reconcile", "Node is offline: %s", message)
			}
		}
	}
	if expiresIn > 0 {
		// Come back exactly when the Lease would expire; renewals of a
		// live Lease need no reconcile of their own.
		return ctrl.Result{RequeueAfter: expiresIn}, nil
	}
	return ctrl.Result{}, nil
}

// judge tells the node's state from its Lease. Before a node online goes
// offline, its Lease (and the hub replica's it names) is read past the
// cache: the cache may be behind, and if that read gets no answer the
// controller is the one cut off, and declares nothing. The first answer
// after such an outage gives every node a full grace period from then, as
// a new leader does: renewals sent while the controller could not see
// them are not the nodes' fault.
func (r *Reconciler) judge(ctx context.Context, node *edgev1alpha1.EdgeNode, lease *coordinationv1.Lease) (edgev1alpha1.NodeState, string, string, time.Duration, error) {
	state, reason, message, left, err := r.liveness(ctx, r.Client, lease)
	if err != nil || state != edgev1alpha1.NodeOffline || lease == nil || node.Status.Status == edgev1alpha1.NodeOffline {
		return state, reason, message, left, err
	}
	live := &coordinationv1.Lease{}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(lease), live)
	if r.answered(err); err != nil {
		if apierrors.IsNotFound(err) {
			return edgev1alpha1.NodeOffline, edgev1alpha1.ReasonLeaseMissing, "The node's agent has not created its Lease.", 0, nil
		}
		return "", "", "", 0, fmt.Errorf("reading the node's Lease before declaring the node offline: %w", err)
	}
	return r.liveness(ctx, r.APIReader, live)
}

// answered notes the outcome of a call to the API server: whether the
// controller is cut off from it, or just got an answer again.
func (r *Reconciler) answered(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case unreachable.Is(err):
		r.blind = true
	case r.blind:
		r.blind, r.regained = false, r.Clock.Now()
	}
}

// liveness tells the node's state from its Lease, and how long until a live
// Lease expires: a grace period after the controller last saw the Lease's
// renewTime change (or regained the API server), whatever time the agent's
// clock wrote. A node behind the edge hub renews nothing itself: its Lease
// names the hub replica it beats at, whose own Lease's renewals count as
// the node's; an empty holder is the hub's word that the node stopped
// beating.
func (r *Reconciler) liveness(ctx context.Context, leases client.Reader, lease *coordinationv1.Lease) (edgev1alpha1.NodeState, string, string, time.Duration, error) {
	if lease == nil {
		return edgev1alpha1.NodeOffline, edgev1alpha1.ReasonLeaseMissing, "The node's agent has not created its Lease.", 0, nil
	}
	seen := r.noteRenewal(lease).seenAt
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	replica, viaHub := strings.CutPrefix(holder, hubapi.HolderPrefix)
	switch {
	case lease.Spec.HolderIdentity != nil && holder == "":
		return edgev1alpha1.NodeOffline, edgev1alpha1.ReasonAgentDisconnected,
			fmt.Sprintf("The agent sent the edge hub no heartbeat within the grace period of %s.", r.GracePeriod), 0, nil
	case viaHub:
		hub := &coordinationv1.Lease{}
		err := leases.Get(ctx, types.NamespacedName{Namespace: r.LeaseNamespace, Name: replica}, hub)
		if apierrors.IsNotFound(err) {
			return edgev1alpha1.NodeOffline, edgev1alpha1.ReasonHubReplicaLost,
				fmt.Sprintf("The edge hub replica %s the agent beat at is gone, and the agent has not beaten at another.", replica), 0, nil
		}
		if err != nil {
			return "", "", "", 0, fmt.Errorf("reading the Lease of hub replica %s: %w", replica, err)
		}
		if hubSeen := r.noteRenewal(hub).seenAt; hubSeen.After(seen) {
			seen = hubSeen
		}
	}
	r.mu.Lock()
	if r.regained.After(seen) {
		seen = r.regained
	}
	r.mu.Unlock()
	left := seen.Add(r.GracePeriod).Sub(r.Clock.Now())
	switch {
	case left > 0 && viaHub:
		return edgev1alpha1.NodeOnline, edgev1alpha1.ReasonAgentReady, fmt.Sprintf("The agent beats at edge hub replica %s.", replica), left, nil
	case left > 0:
		return edgev1alpha1.NodeOnline, edgev1alpha1.ReasonAgentReady, "The agent renews its Lease.", left, nil
	case viaHub:
		return edgev1alpha1.NodeOffline, edgev1alpha1.ReasonHubReplicaLost,
			fmt.Sprintf("The edge hub replica %s the agent beat at has not renewed its Lease within the grace period of %s, and the agent has not beaten at another.", replica, r.GracePeriod), 0, nil
	}
	return edgev1alpha1.NodeOffline, edgev1alpha1.ReasonLeaseExpired,
		fmt.Sprintf("The agent has not renewed its Lease within the grace period of %s.", r.GracePeriod), 0, nil
}

// noteRenewal records a Lease's renewTime, stamped with the controller's clock
// when it differs from the one last seen, and returns the record. A Lease
// first seen (at start, or after a failover) counts as renewed now, so a
// new leader gives every node a full grace period, as kubelets get.
func (r *Reconciler) noteRenewal(lease *coordinationv1.Lease) renewal {
	written := lease.CreationTimestamp.Time
	if lease.Spec.RenewTime != nil {
		written = lease.Spec.RenewTime.Time
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.renewals == nil {
		r.renewals = map[string]renewal{}
	}
	seen, ok := r.renewals[lease.Name]
	if !ok || !seen.renewTime.Equal(written) {
		seen = renewal{renewTime: written, seenAt: r.Clock.Now()}
		r.renewals[lease.Name] = seen
	}
	return seen
}

func (r *Reconciler) dropRenewal(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.renewals, node)
}

// applyStatus writes the controller-owned fields of the status by
// server-side apply, leaving the agent's fields to the agent.
func (r *Reconciler) applyStatus(ctx context.Context, node *edgev1alpha1.EdgeNode, st *edgev1alpha1.EdgeNodeStatus) error {
	status := acv1alpha1.EdgeNodeStatus().WithObservedGeneration(st.ObservedGeneration).WithStatus(st.Status)
	for _, c := range st.Conditions {
		if c.Type != edgev1alpha1.ConditionReady {
			continue // the agent's (RuntimeReady) stay the agent's
		}
		status.WithConditions(acmetav1.Condition().WithType(c.Type).WithStatus(c.Status).WithObservedGeneration(c.ObservedGeneration).
			WithLastTransitionTime(c.LastTransitionTime).WithReason(c.Reason).WithMessage(c.Message))
	}
	return r.Status().Apply(ctx, acv1alpha1.EdgeNode(node.Name).WithStatus(status), client.FieldOwner(patch.FieldOwner), client.ForceOwnership)
}

// SetupWithManager wires the reconciler to EdgeNodes and their Leases.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&edgev1alpha1.EdgeNode{}).
		Watches(&coordinationv1.Lease{}, r.leaseEvents()).
		Named("edgenode").
		WithOptions(opts).
		Complete(r)
}

// leaseEvents observes every renewal of the lease namespace's Leases as it
// arrives, and queues a reconcile only for what can change a node's state:
// a Lease created or deleted, or renewed while its node is not online. A
// live node's renewals only push its expiry further, and the reconcile
// queued for that expiry reads the newest observation.
func (r *Reconciler) leaseEvents() handler.EventHandler {
	ours := func(o client.Object) bool { return o.GetNamespace() == r.LeaseNamespace }
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object) {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: o.GetName()}})
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			lease, ok := e.Object.(*coordinationv1.Lease)
			if !ok || !ours(lease) {
				return
			}
			r.noteRenewal(lease)
			if !isHubReplica(lease) {
				enqueue(q, lease)
				return
			}
			// A node's Lease seen before its replica's was judged without
			// it: judge it again now.
			holder := hubapi.HolderPrefix + lease.Name
			list := &coordinationv1.LeaseList{}
			if err := r.List(ctx, list, client.InNamespace(r.LeaseNamespace)); err != nil {
				return
			}
			for i := range list.Items {
				if ptr.Deref(list.Items[i].Spec.HolderIdentity, "") == holder {
					enqueue(q, &list.Items[i])
				}
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			lease, ok := e.ObjectNew.(*coordinationv1.Lease)
			if !ok || !ours(lease) {
				return
			}
			r.noteRenewal(lease)
			if isHubReplica(lease) {
				return // its nodes' expiries read it when they come
			}
			old, _ := e.ObjectOld.(*coordinationv1.Lease)
			if r.notOnline(lease.Name) || old == nil || ptr.Deref(old.Spec.HolderIdentity, "") != ptr.Deref(lease.Spec.HolderIdentity, "") {
				enqueue(q, lease)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if ours(e.Object) {
				r.dropRenewal(e.Object.GetName())
				if _, hub := e.Object.GetLabels()[hubapi.LabelHubReplica]; !hub {
					enqueue(q, e.Object)
				}
			}
		},
	}
}

// isHubReplica says whether a Lease of the namespace is an edge hub
// replica's rather than a node's.
func isHubReplica(lease *coordinationv1.Lease) bool {
	_, ok := lease.Labels[hubapi.LabelHubReplica]
	return ok
}

func (r *Reconciler) notOnline(name string) bool {
	node := &edgev1alpha1.EdgeNode{}
	err := r.Get(context.Background(), types.NamespacedName{Name: name}, node)
	return err == nil && node.Status.Status != edgev1alpha1.NodeOnline
}
