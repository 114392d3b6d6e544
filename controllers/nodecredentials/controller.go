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

// Package nodecredentials reconciles each node's credentials Secret: the
// pull credentials of the services placed on the node, merged.
package nodecredentials

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	acmetav1 "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/patch"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/registryauth"
)

// Reconciler keeps each node's credentials Secret: in the
// Lease namespace, named after the node, owned by its EdgeNode, holding
// for every service placed on the node that pulls with pullSecretRefs the
// merge of those Secrets' credentials. An agent may read its own node's
// Secret and no other, so it never sees the credentials of services that
// are not on its node (as the kubelet reads only its own pods' secrets).
// The Secret is created when a node first needs credentials, updated when
// placements or the referenced Secrets change, and emptied when none
// remain.
type Reconciler struct {
	client.Client
	Recorder       recorder.EventRecorder
	LeaseNamespace string
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete,namespace=edgeplane-node-lease

// Reconcile brings one node's credentials Secret up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	node := &edgev1alpha1.EdgeNode{}
	if err := r.Get(ctx, types.NamespacedName{Name: req.Name}, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // its Secret goes with it
	}
	services, err := r.servicesOn(ctx, node.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	data := map[string][]byte{}
	for _, svc := range services {
		if svc.DeletionTimestamp != nil || len(svc.Spec.Image.PullSecretRefs) == 0 {
			continue
		}
		creds, err := r.credentials(ctx, svc)
		if err != nil {
			return ctrl.Result{}, err
		}
		data[edgev1alpha1.NodeCredentialsKey(svc.Namespace, svc.Name)] = creds
	}

	current := &corev1.Secret{}
	err = r.Get(ctx, types.NamespacedName{Namespace: r.LeaseNamespace, Name: node.Name}, current)
	switch {
	case apierrors.IsNotFound(err):
		if len(data) == 0 {
			return ctrl.Result{}, nil // none needed, none made
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading the node's credentials: %w", err)
	case current.Type != edgev1alpha1.SecretTypeNodeCredentials || !subset(current.Data, data):
		// A Secret's type is immutable, and keys someone else added are
		// not ours to apply away: such a Secret goes, and ours is made
		// anew, holding exactly what the node's services need.
		if err := r.Delete(ctx, current, client.Preconditions{UID: &current.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("removing a Secret in the node's place that is not the node's credentials: %w", err)
		}
	case sameData(current.Data, data) && current.Labels[edgev1alpha1.LabelNodeCredentials] == node.Name && ownedBy(current, node):
		return ctrl.Result{}, nil
	}
	secret := corev1ac.Secret(node.Name, r.LeaseNamespace).
		WithType(edgev1alpha1.SecretTypeNodeCredentials).
		WithLabels(map[string]string{edgev1alpha1.LabelNodeCredentials: node.Name}).
		WithOwnerReferences(acmetav1.OwnerReference().WithAPIVersion(edgev1alpha1.GroupVersion.String()).WithKind("EdgeNode").
			WithName(node.Name).WithUID(node.UID).WithController(true)).
		WithData(data)
	if err := r.Apply(ctx, secret, client.FieldOwner(patch.FieldOwner), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying the node's credentials: %w", err)
	}
	logf.FromContext(ctx).Info("Node credentials updated", "services", len(data))
	return ctrl.Result{}, nil
}

// credentials merges the Secrets a service pulls with, in order. A Secret
// that is missing or of another type is skipped, with an event on the
// service: the pull then fails with the registry's own reason.
func (r *Reconciler) credentials(ctx context.Context, svc *edgev1alpha1.EdgeService) ([]byte, error) {
	configs := make([]registryauth.Config, 0, len(svc.Spec.Image.PullSecretRefs))
	for _, ref := range svc.Spec.Image.PullSecretRefs {
		s := &corev1.Secret{}
		// The cache holds only Secrets of type kubernetes.io/dockerconfigjson.
		err := r.Get(ctx, types.NamespacedName{Namespace: svc.Namespace, Name: ref.Name}, s)
		if apierrors.IsNotFound(err) || (err == nil && s.Type != corev1.SecretTypeDockerConfigJson) {
			r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, "PullSecretMissing", "Credentials",
				"Secret %s/%s is not a Secret of type %s; the image is pulled without it.", svc.Namespace, ref.Name, corev1.SecretTypeDockerConfigJson)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading pull Secret %s: %w", ref.Name, err)
		}
		c, err := registryauth.Parse(s.Data[corev1.DockerConfigJsonKey])
		if err != nil {
			r.Recorder.Eventf(svc, nil, corev1.EventTypeWarning, "PullSecretInvalid", "Credentials", "Secret %s/%s: %s", svc.Namespace, ref.Name, err)
			continue
		}
		configs = append(configs, c)
	}
	return json.Marshal(registryauth.Merge(configs...))
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// subset says whether every key of a is in b.
func subset(a, b map[string][]byte) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func ownedBy(s *corev1.Secret, node *edgev1alpha1.EdgeNode) bool {
	for _, o := range s.OwnerReferences {
		if o.UID == node.UID {
			return true
		}
	}
	return false
}

// servicesOn returns the services with instances on a node: those in
// its assignment (not being deleted), and those whose status.containers
// place one there (agents that predate assignments).
func (r *Reconciler) servicesOn(ctx context.Context, node string) ([]*edgev1alpha1.EdgeService, error) {
	keys := map[types.NamespacedName]bool{}
	a := &edgev1alpha1.NodeAssignment{}
	if err := r.Get(ctx, types.NamespacedName{Name: node}, a); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading the node's assignment: %w", err)
	}
	for key, e := range a.Spec.Services {
		if ns, name, ok := strings.Cut(key, "/"); ok && !e.Deleting {
			keys[types.NamespacedName{Namespace: ns, Name: name}] = true
		}
	}
	legacy := &edgev1alpha1.EdgeServiceList{}
	if err := r.List(ctx, legacy, client.MatchingFields{index.ServiceByNode: node}); err != nil {
		return nil, fmt.Errorf("listing the node's services: %w", err)
	}
	for i := range legacy.Items {
		keys[client.ObjectKeyFromObject(&legacy.Items[i])] = true
	}
	out := make([]*edgev1alpha1.EdgeService, 0, len(keys))
	for key := range keys {
		svc := &edgev1alpha1.EdgeService{}
		if err := r.Get(ctx, key, svc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		out = append(out, svc)
	}
	return out, nil
}

// nodesOf returns the nodes a service has instances on, from the
// assignments that hold it and its status.
func (r *Reconciler) nodesOf(ctx context.Context, svc *edgev1alpha1.EdgeService) map[string]bool {
	nodes := map[string]bool{}
	list := &edgev1alpha1.NodeAssignmentList{}
	if err := r.List(ctx, list, client.MatchingFields{index.AssignmentByService: edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)}); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the assignments of a service", "service", svc.Namespace+"/"+svc.Name)
	}
	for i := range list.Items {
		nodes[list.Items[i].Name] = true
	}
	for _, inst := range svc.Status.Containers {
		nodes[inst.NodeName] = true
	}
	return nodes
}

// SetupWithManager wires the reconciler to the services that pull with
// credentials, to the nodes' assignments, to the Secrets the services
// name and to the nodes' own Secrets.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodecredentials").
		Watches(&edgev1alpha1.EdgeService{}, handler.Funcs{
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
				r.enqueueCredentialNodes(ctx, q, e.ObjectOld.(*edgev1alpha1.EdgeService), e.ObjectNew.(*edgev1alpha1.EdgeService))
			},
		}).
		// A service placed on a node or taken off it.
		Watches(&edgev1alpha1.NodeAssignment{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: e.Object.GetName()}})
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
				if servicesKept(e.ObjectOld.(*edgev1alpha1.NodeAssignment)) != servicesKept(e.ObjectNew.(*edgev1alpha1.NodeAssignment)) {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: e.ObjectNew.GetName()}})
				}
			},
		}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretNodes)).
		WithOptions(opts).
		Complete(r)
}

// servicesKept names the services an assignment keeps on its node.
func servicesKept(a *edgev1alpha1.NodeAssignment) string {
	keys := make([]string, 0, len(a.Spec.Services))
	for key, e := range a.Spec.Services {
		if !e.Deleting {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// enqueueCredentialNodes queues the nodes of a service whose pull Secrets
// changed, and those of a service that pulls with credentials whose
// status.containers moved (agents that predate assignments); other
// placements and deletions come through the assignments.
func (r *Reconciler) enqueueCredentialNodes(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], old, svc *edgev1alpha1.EdgeService) {
	nodes := map[string]bool{}
	switch {
	case fmt.Sprint(old.Spec.Image.PullSecretRefs) != fmt.Sprint(svc.Spec.Image.PullSecretRefs):
		nodes = r.nodesOf(ctx, svc)
	case len(svc.Spec.Image.PullSecretRefs) > 0 && !sameNodes(old, svc):
	default:
		return
	}
	for _, s := range []*edgev1alpha1.EdgeService{old, svc} {
		for _, inst := range s.Status.Containers {
			nodes[inst.NodeName] = true
		}
	}
	for n := range nodes {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: n}})
	}
}

func sameNodes(a, b *edgev1alpha1.EdgeService) bool {
	set := func(s *edgev1alpha1.EdgeService) string {
		m := map[string]bool{}
		for _, inst := range s.Status.Containers {
			m[inst.NodeName] = true
		}
		return fmt.Sprint(m) // fmt sorts map keys
	}
	return set(a) == set(b)
}

// secretNodes maps a Secret to the nodes it matters to: a node's own
// Secret (changed or deleted by hand) to its node; a pull Secret to the
// nodes of the services that name it.
func (r *Reconciler) secretNodes(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() == r.LeaseNamespace {
		if node := o.GetLabels()[edgev1alpha1.LabelNodeCredentials]; node != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: node}}}
		}
		return nil
	}
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.List(ctx, services, client.MatchingFields{index.ServiceByPullSecret: o.GetNamespace() + "/" + o.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the services of a pull Secret", "secret", o.GetNamespace()+"/"+o.GetName())
		return nil
	}
	seen := map[string]bool{}
	var out []reconcile.Request
	for i := range services.Items {
		for n := range r.nodesOf(ctx, &services.Items[i]) {
			if !seen[n] {
				seen[n] = true
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: n}})
			}
		}
	}
	return out
}
