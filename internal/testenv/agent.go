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

package testenv

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// AgentFieldOwner is the field manager tests write agent fields with, as
// cmd/edge-agent does.
const AgentFieldOwner = "edge-agent"

// RenewLease renews a node's Lease in namespace as its agent would,
// creating it first.
func RenewLease(ctx context.Context, c client.Client, namespace, node string) error {
	now := metav1.NowMicro()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: namespace}}
	err := c.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	if apierrors.IsNotFound(err) {
		lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now}
		return c.Create(ctx, lease)
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	return c.Update(ctx, lease)
}

// Report applies the agent's half of a node's status: node info, boot time
// and the observed containers, under AgentFieldOwner.
func Report(ctx context.Context, c client.Client, node string, info edgev1alpha1.NodeInfo, bootTime *metav1.Time, containers ...edgev1alpha1.ObservedContainer) error {
	list := make([]any, 0, len(containers))
	for i := range containers {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&containers[i])
		if err != nil {
			return err
		}
		list = append(list, u)
	}
	infoMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&info)
	if err != nil {
		return err
	}
	status := map[string]any{"nodeInfo": infoMap, "containers": list}
	if bootTime != nil {
		status["bootTime"] = bootTime.UTC().Format("2006-01-02T15:04:05Z")
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": edgev1alpha1.GroupVersion.String(),
		"kind":       "EdgeNode",
		"metadata":   map[string]any{"name": node},
		"status":     status,
	}}
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(AgentFieldOwner), client.ForceOwnership)
}
