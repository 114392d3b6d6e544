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
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/instances"
)

// Instances reads a service's instances as the manager and the facade
// read them: from the nodes' assignments, each with the deployment status
// its node's report gives it, oldest first.
func Instances(ctx context.Context, c client.Reader, namespace, name string) ([]edgev1alpha1.ServiceInstance, error) {
	list := &edgev1alpha1.NodeAssignmentList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	key := edgev1alpha1.AssignmentKey(namespace, name)
	var out []edgev1alpha1.ServiceInstance
	for i := range list.Items {
		e, ok := list.Items[i].Spec.Services[key]
		if !ok {
			continue
		}
		node := &edgev1alpha1.EdgeNode{}
		if err := c.Get(ctx, client.ObjectKey{Name: list.Items[i].Name}, node); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		for _, inst := range instances.Of(list.Items[i].Name, &e) {
			obs := instances.Observed(node, inst.TaskID)
			inst.DeployStatus, inst.FailedMessage = instances.Status(inst.Revision, e.Spec.Action, obs)
			if obs != nil {
				inst.CreatedTime = obs.CreatedTime
			}
			out = append(out, inst)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].TaskCreatedTime.Equal(&out[j].TaskCreatedTime) {
			return out[i].TaskCreatedTime.Before(&out[j].TaskCreatedTime)
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out, nil
}
