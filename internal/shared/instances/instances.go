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

// Package instances reads a service's instances where they live: each in
// its node's NodeAssignment, its deployment status in what the node's
// agent reports. The manager's counts and the facade's containers both
// come from here, so they always agree.
package instances

import (
	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// Of returns a service's instances on one node, from its entry in the
// node's assignment, without their deployment status.
func Of(node string, e *edgev1alpha1.AssignedService) []edgev1alpha1.ServiceInstance {
	out := make([]edgev1alpha1.ServiceInstance, len(e.Instances))
	for i, inst := range e.Instances {
		out[i] = edgev1alpha1.ServiceInstance{
			TaskID: inst.TaskID, Name: inst.Name, NodeName: node, Revision: inst.Revision,
			DeployNum: inst.DeployNum, TaskCreatedTime: inst.TaskCreatedTime,
		}
	}
	return out
}

// Observed finds what a node's agent reports for a task (nil: nothing
// yet, or the node is gone). A scan of the node's few containers costs
// less than a map of them.
func Observed(n *edgev1alpha1.EdgeNode, taskID string) *edgev1alpha1.ObservedContainer {
	if n == nil {
		return nil
	}
	for i := range n.Status.Containers {
		if c := &n.Status.Containers[i]; c.TaskID == taskID {
			return c
		}
	}
	return nil
}

// Status is where the deployment of an instance that should run revision
// rev stands, from what its agent reports: deploying until a container
// runs at rev, failure with the agent's reason, success once the
// container at rev has started (a load needs only the container). A
// container that exits after it started is a runtime state, not a failed
// deployment: its startedTime stays.
func Status(rev int64, action edgev1alpha1.DeployAction, obs *edgev1alpha1.ObservedContainer) (edgev1alpha1.DeployStatus, string) {
	switch {
	case obs == nil || obs.Revision != rev:
		return edgev1alpha1.DeployDeploying, ""
	case obs.FailedMessage != "":
		return edgev1alpha1.DeployFailure, obs.FailedMessage
	case obs.State == edgev1alpha1.ContainerRunning, obs.StartedTime != nil,
		action == edgev1alpha1.ActionLoad && obs.State != "":
		return edgev1alpha1.DeploySuccess, ""
	}
	return edgev1alpha1.DeployDeploying, ""
}
