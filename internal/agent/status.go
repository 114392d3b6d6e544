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

package agent

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	acv1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// ApplyStatus applies an agent's half of a node's status by server-side
// apply under FieldOwner: node info, boot time (when set), the containers
// and their counts. The controller's half (liveness) stays the
// controller's.
func ApplyStatus(ctx context.Context, c client.Client, node string, info edgev1alpha1.NodeInfo, bootTime *metav1.Time, containers []edgev1alpha1.ObservedContainer, counts Counts) error {
	st := acv1alpha1.EdgeNodeStatus().
		WithNodeInfo(acv1alpha1.NodeInfo().WithType(info.Type).WithArch(info.Arch).WithOSVersion(info.OSVersion).
			WithRuntimeVersion(info.RuntimeVersion).WithAgentVersion(info.AgentVersion)).
		WithContainerTotal(counts.ContainerTotal).WithContainerRunning(counts.ContainerRunning).
		WithContainerManagedTotal(counts.ContainerManagedTotal).WithContainerManagedRunning(counts.ContainerManagedRunning).
		WithAppTotal(counts.AppTotal).WithAppRunning(counts.AppRunning)
	if bootTime != nil {
		st.WithBootTime(*bootTime)
	}
	// An empty list is applied as such: the agent owns the list and a
	// node whose containers are all gone reports none.
	st.Containers = make([]acv1alpha1.ObservedContainerApplyConfiguration, 0, len(containers))
	for i := range containers {
		oc, err := observedApply(&containers[i])
		if err != nil {
			return err
		}
		st.WithContainers(oc)
	}
	return c.Status().Apply(ctx, acv1alpha1.EdgeNode(node).WithStatus(st), client.FieldOwner(FieldOwner), client.ForceOwnership)
}

// observedApply is the apply configuration of an observed container: the
// fields it sets, nothing else (the type and its apply configuration share
// one JSON shape, and unset fields are omitted).
func observedApply(o *edgev1alpha1.ObservedContainer) (*acv1alpha1.ObservedContainerApplyConfiguration, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	ac := &acv1alpha1.ObservedContainerApplyConfiguration{}
	return ac, json.Unmarshal(data, ac)
}
