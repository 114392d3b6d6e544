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
	"testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestCount(t *testing.T) {
	c := func(task string, state edgev1alpha1.ContainerState) edgev1alpha1.ObservedContainer {
		return edgev1alpha1.ObservedContainer{Name: "c-" + task, TaskID: task, State: state}
	}
	placed := map[string]string{"t1": "ns/a", "t2": "ns/a", "t3": "ns/b", "t4": "ns/c"}
	for _, tc := range []struct {
		name       string
		containers []edgev1alpha1.ObservedContainer
		placed     map[string]string
		want       Counts
	}{{
		name:   "nothing runs yet: the placed services count, no container",
		placed: placed,
		want:   Counts{AppTotal: 3},
	}, {
		name: "managed and unmanaged, running and not",
		containers: []edgev1alpha1.ObservedContainer{
			c("t1", edgev1alpha1.ContainerRunning), c("t2", edgev1alpha1.ContainerExited), c("t3", edgev1alpha1.ContainerPaused),
			c("", edgev1alpha1.ContainerRunning), c("", edgev1alpha1.ContainerExited),
			c("no-such-task", edgev1alpha1.ContainerRunning),
		},
		placed: placed,
		want: Counts{ContainerTotal: 6, ContainerRunning: 3, ContainerManagedTotal: 3, ContainerManagedRunning: 1,
			AppTotal: 3, AppRunning: 1},
	}, {
		name:       "a container-less failure entry counts as a container, not running",
		containers: []edgev1alpha1.ObservedContainer{{Name: "failed", TaskID: "t4", State: edgev1alpha1.ContainerExited, FailedMessage: "no image"}},
		placed:     placed,
		want:       Counts{ContainerTotal: 1, ContainerManagedTotal: 1, AppTotal: 3},
	}, {
		name:       "an instance waiting on its image's pull is no container",
		containers: []edgev1alpha1.ObservedContainer{{Name: "pulling", TaskID: "t4", ImagePull: &edgev1alpha1.ImagePull{Image: "app:1", BytesDone: 1, BytesTotal: 2}}},
		placed:     placed,
		want:       Counts{AppTotal: 3},
	}, {
		name:       "nothing placed: every container is unmanaged",
		containers: []edgev1alpha1.ObservedContainer{c("t1", edgev1alpha1.ContainerRunning)},
		want:       Counts{ContainerTotal: 1, ContainerRunning: 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Count(tc.containers, tc.placed); got != tc.want {
				t.Fatalf("Count = %+v, want %+v", got, tc.want)
			}
		})
	}
}
