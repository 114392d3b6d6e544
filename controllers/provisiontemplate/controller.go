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

// Package provisiontemplate reconciles ProvisionTemplates, the tree of
// folders and templates: whether each entry's folder exists, how many
// entries a folder holds, and no folder deleted while it holds any.
package provisiontemplate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/conditions"
	"github.com/edgeplane/edgeplane/controllers/internal/patch"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

// Reconciler keeps the path-label tree consistent: each
// entry says whether its parent folder exists, each folder counts its
// entries, and a folder is not deleted while entries remain in it.
//
// Deleting a non-empty folder is held by a finalizer rather than refused:
// refusing would need an admission webhook (a validating policy cannot look
// at other objects), and a finalizer explains itself in the folder's status
// and Events while letting a user delete the folder and its entries in one
// command.
type Reconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	Clock    clock.PassiveClock
}

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=provisiontemplates,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=provisiontemplates/status,verbs=get;patch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=provisiontemplates/finalizers,verbs=update

// Reconcile brings one entry's status and finalizer up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pt := &edgev1alpha1.ProvisionTemplate{}
	if err := r.Get(ctx, req.NamespacedName, pt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	isFolder := pt.Spec.Type == edgev1alpha1.TypeFolder

	children := 0
	if isFolder {
		list := &edgev1alpha1.ProvisionTemplateList{}
		if err := r.List(ctx, list, client.InNamespace(pt.Namespace),
			client.MatchingFields{index.TemplateByParent: index.Key(pt.Namespace, paths.Join(string(pt.Spec.Path), pt.Spec.Name))}); err != nil {
			return ctrl.Result{}, err
		}
		children = len(list.Items)
	}

	if pt.DeletionTimestamp != nil {
		if !controllerutil.ContainsFinalizer(pt, edgev1alpha1.FinalizerChildren) || children > 0 {
			return ctrl.Result{}, r.writeStatus(ctx, pt, children)
		}
		return ctrl.Result{}, client.IgnoreNotFound(patch.SetFinalizer(ctx, r.Client, pt, edgev1alpha1.FinalizerChildren, false))
	}
	if isFolder {
		if err := patch.SetFinalizer(ctx, r.Client, pt, edgev1alpha1.FinalizerChildren, true); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.writeStatus(ctx, pt, children)
}

// conditionDeleting is True on a folder whose deletion waits for its entries.
const conditionDeleting = "Deleting"

// writeStatus patches the status when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, pt *edgev1alpha1.ProvisionTemplate, children int) error {
	now := r.Clock.Now() // one time for every condition this write sets
	status := pt.Status.DeepCopy()
	status.ObservedGeneration = pt.Generation
	status.Children = int32(children)

	parentStatus, reason, message := metav1.ConditionTrue, edgev1alpha1.ReasonParentExists, "The parent folder exists."
	if pt.Spec.Path != "/" {
		list := &edgev1alpha1.ProvisionTemplateList{}
		if err := r.List(ctx, list, client.InNamespace(pt.Namespace), client.MatchingFields{index.FolderByPath: index.Key(pt.Namespace, string(pt.Spec.Path))}); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			parentStatus, reason, message = metav1.ConditionFalse, edgev1alpha1.ReasonParentMissing, fmt.Sprintf("No folder %s exists in this namespace.", pt.Spec.Path)
		}
	}
	status.Conditions = conditions.Set(status.Conditions, now, pt.Generation, edgev1alpha1.ConditionParentReady, parentStatus, reason, message)
	if pt.DeletionTimestamp != nil && children > 0 {
		if meta.FindStatusCondition(pt.Status.Conditions, conditionDeleting) == nil {
			r.Recorder.Eventf(pt, nil, corev1.EventTypeNormal, edgev1alpha1.ReasonChildrenRemain, "Delete",
				"The folder is deleted once its %d entries are gone", children)
		}
		status.Conditions = conditions.Set(status.Conditions, now, pt.Generation, conditionDeleting, metav1.ConditionTrue, edgev1alpha1.ReasonChildrenRemain,
			fmt.Sprintf("The folder is deleted once its %d entries are gone.", children))
	}
	var progressing *conditions.Problem
	if c := meta.FindStatusCondition(status.Conditions, edgev1alpha1.ConditionParentReady); c.Status != metav1.ConditionTrue {
		progressing = conditions.ProblemOf(c)
	} else if c := meta.FindStatusCondition(status.Conditions, conditionDeleting); c != nil && c.Status == metav1.ConditionTrue {
		progressing = conditions.ProblemOf(c)
	}
	status.Conditions = conditions.Summarize(status.Conditions, now, pt.Generation, nil, progressing)
	if equality.Semantic.DeepEqual(status, &pt.Status) {
		return nil
	}
	base := client.MergeFrom(pt.DeepCopy())
	pt.Status = *status
	return client.IgnoreNotFound(r.Status().Patch(ctx, pt, base))
}

// SetupWithManager wires the reconciler to entries; a change of an entry
// also queues its parent folder and, for a folder, its own entries.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&edgev1alpha1.ProvisionTemplate{}).
		Watches(&edgev1alpha1.ProvisionTemplate{}, handler.EnqueueRequestsFromMapFunc(r.related)).
		Named("provisiontemplate").
		WithOptions(opts).
		Complete(r)
}

func (r *Reconciler) related(ctx context.Context, o client.Object) []reconcile.Request {
	pt := o.(*edgev1alpha1.ProvisionTemplate)
	var out []reconcile.Request
	parents := &edgev1alpha1.ProvisionTemplateList{}
	if err := r.List(ctx, parents, client.InNamespace(pt.Namespace), client.MatchingFields{index.FolderByPath: index.Key(pt.Namespace, string(pt.Spec.Path))}); err == nil {
		for i := range parents.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&parents.Items[i])})
		}
	}
	if pt.Spec.Type == edgev1alpha1.TypeFolder {
		kids := &edgev1alpha1.ProvisionTemplateList{}
		if err := r.List(ctx, kids, client.InNamespace(pt.Namespace), client.MatchingFields{index.TemplateByParent: index.Key(pt.Namespace, paths.Join(string(pt.Spec.Path), pt.Spec.Name))}); err == nil {
			for i := range kids.Items {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: kids.Items[i].Namespace, Name: kids.Items[i].Name}})
			}
		}
	}
	return out
}
