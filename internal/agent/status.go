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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// ApplyStatus applies an agent's half of a node's status by server-side
// apply under FieldOwner: node info, boot time (when set), the containers
// and their counts. The controller's half (liveness) stays the
// controller's.
func ApplyStatus(ctx context.Context, c client.Client, node string, info edgev1alpha1.NodeInfo, bootTime *metav1.Time, containers []edgev1alpha1.ObservedContainer, counts Counts) error {
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
	status := map[string]any{"nodeInfo": infoMap, "containers": list,
		"containerTotal": int64(counts.ContainerTotal), "containerRunning": int64(counts.ContainerRunning),
		"containerManagedTotal": int64(counts.ContainerManagedTotal), "containerManagedRunning": int64(counts.ContainerManagedRunning),
		"appTotal": int64(counts.AppTotal), "appRunning": int64(counts.AppRunning)}
	if bootTime != nil {
		status["bootTime"] = bootTime.UTC().Format(time.RFC3339)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": edgev1alpha1.GroupVersion.String(),
		"kind":       "EdgeNode",
		"metadata":   map[string]any{"name": node},
		"status":     status,
	}}
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership)
}
