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
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
)

// AgentFieldOwner is the field manager of agents' writes.
const AgentFieldOwner = agent.FieldOwner

// RenewLease renews a node's Lease in namespace as its agent would,
// creating it first.
func RenewLease(ctx context.Context, c client.Client, namespace, node string) error {
	return RenewLeaseAt(ctx, c, namespace, node, time.Now())
}

// RenewLeaseAt renews a node's Lease as an agent whose clock reads at.
func RenewLeaseAt(ctx context.Context, c client.Client, namespace, node string, at time.Time) error {
	now := metav1.NewMicroTime(at)
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

// Report applies the agent's half of a node's status as an agent does:
// node info, boot time, the observed containers and their counts, against
// the instances placed on the node as its assignment has them.
func Report(ctx context.Context, c client.Client, node string, info edgev1alpha1.NodeInfo, bootTime *metav1.Time, containers ...edgev1alpha1.ObservedContainer) error {
	return ReportRuntime(ctx, c, node, info, bootTime, nil, containers...)
}

// ReportRuntime is Report with the RuntimeReady condition an agent's
// engine probe writes (nil: none, as before its first probe).
func ReportRuntime(ctx context.Context, c client.Client, node string, info edgev1alpha1.NodeInfo, bootTime *metav1.Time, runtime *metav1.Condition, containers ...edgev1alpha1.ObservedContainer) error {
	a := &edgev1alpha1.NodeAssignment{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, a); client.IgnoreNotFound(err) != nil {
		return err
	}
	serviceOfTask := map[string]string{}
	for key, e := range a.Spec.Services {
		for _, inst := range e.Instances {
			serviceOfTask[inst.TaskID] = key
		}
	}
	return agent.ApplyStatus(ctx, c, node, info, bootTime, runtime, containers, agent.Count(containers, serviceOfTask))
}
