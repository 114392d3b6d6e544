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
	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// Counts are the container and service counts of a node's status. The
// agent writes them with its containers, in the same apply: they change
// exactly when the containers or the node's placements do, and a count the
// controller wrote after every report cost a write per report.
type Counts struct {
	ContainerTotal, ContainerRunning               int32
	ContainerManagedTotal, ContainerManagedRunning int32
	AppTotal, AppRunning                           int32
}

// Count counts a node's containers. serviceOfTask maps the task of every
// instance placed on the node to its service: a container is managed when
// its task is placed here, a service (app) counts when it has an instance
// here, and runs when one of its containers here runs.
func Count(containers []edgev1alpha1.ObservedContainer, serviceOfTask map[string]string) Counts {
	var c Counts
	running := map[string]bool{}
	for _, o := range containers {
		if o.ImagePull != nil {
			continue // an instance waiting on its image has no container yet
		}
		c.ContainerTotal++
		isRunning := o.State == edgev1alpha1.ContainerRunning
		if isRunning {
			c.ContainerRunning++
		}
		svc, managed := serviceOfTask[o.TaskID]
		if !managed || o.TaskID == "" {
			continue
		}
		c.ContainerManagedTotal++
		if isRunning {
			c.ContainerManagedRunning++
			running[svc] = true
		}
	}
	placed := map[string]bool{}
	for _, svc := range serviceOfTask {
		placed[svc] = true
	}
	c.AppTotal, c.AppRunning = int32(len(placed)), int32(len(running))
	return c
}
