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

package instances

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestStatus(t *testing.T) {
	started := metav1.Now()
	for _, tc := range []struct {
		name    string
		action  edgev1alpha1.DeployAction
		obs     *edgev1alpha1.ObservedContainer
		want    edgev1alpha1.DeployStatus
		message string
	}{
		{name: "nothing reported", want: edgev1alpha1.DeployDeploying},
		{name: "an older revision runs", obs: &edgev1alpha1.ObservedContainer{Revision: 1, State: edgev1alpha1.ContainerRunning}, want: edgev1alpha1.DeployDeploying},
		{name: "pulling", obs: &edgev1alpha1.ObservedContainer{Revision: 2, ImagePull: &edgev1alpha1.ImagePull{Image: "app"}}, want: edgev1alpha1.DeployDeploying},
		{name: "created, not started", obs: &edgev1alpha1.ObservedContainer{Revision: 2, State: edgev1alpha1.ContainerCreated}, want: edgev1alpha1.DeployDeploying},
		{name: "running", obs: &edgev1alpha1.ObservedContainer{Revision: 2, State: edgev1alpha1.ContainerRunning}, want: edgev1alpha1.DeploySuccess},
		{name: "exited after it started", obs: &edgev1alpha1.ObservedContainer{Revision: 2, State: edgev1alpha1.ContainerExited, StartedTime: &started}, want: edgev1alpha1.DeploySuccess},
		{name: "failed", obs: &edgev1alpha1.ObservedContainer{Revision: 2, FailedMessage: "pull denied"}, want: edgev1alpha1.DeployFailure, message: "pull denied"},
		{name: "failed after a start", obs: &edgev1alpha1.ObservedContainer{Revision: 2, State: edgev1alpha1.ContainerExited, StartedTime: &started, FailedMessage: "restart refused"},
			want: edgev1alpha1.DeployFailure, message: "restart refused"},
		{name: "a load, created", action: edgev1alpha1.ActionLoad, obs: &edgev1alpha1.ObservedContainer{Revision: 2, State: edgev1alpha1.ContainerCreated}, want: edgev1alpha1.DeploySuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := Status(2, tc.action, tc.obs)
			if got != tc.want || msg != tc.message {
				t.Errorf("Status = %s %q, want %s %q", got, msg, tc.want, tc.message)
			}
		})
	}
}
