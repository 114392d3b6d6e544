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

package edgenode

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// A node's Ready from its liveness and its agent's RuntimeReady.
func TestNodeReady(t *testing.T) {
	down := &metav1.Condition{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionFalse,
		Reason: edgev1alpha1.ReasonRuntimeUnreachable, Message: "dial unix /run/podman/podman.sock: connect: connection refused"}
	up := &metav1.Condition{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionTrue, Reason: edgev1alpha1.ReasonRuntimeReachable}
	for _, tc := range []struct {
		name        string
		state       edgev1alpha1.NodeState
		runtime     *metav1.Condition
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{"online, no runtime condition (an older agent)", edgev1alpha1.NodeOnline, nil, metav1.ConditionTrue, edgev1alpha1.ReasonAgentReady, "lease"},
		{"online, runtime reachable", edgev1alpha1.NodeOnline, up, metav1.ConditionTrue, edgev1alpha1.ReasonAgentReady, "lease"},
		{"online, runtime unreachable", edgev1alpha1.NodeOnline, down, metav1.ConditionFalse, edgev1alpha1.ReasonRuntimeUnreachable,
			"The agent renews its Lease, but its container runtime does not answer: dial unix /run/podman/podman.sock: connect: connection refused"},
		{"offline: what the agent said last is not current", edgev1alpha1.NodeOffline, down, metav1.ConditionUnknown, edgev1alpha1.ReasonLeaseExpired, "lease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason := edgev1alpha1.ReasonAgentReady
			if tc.state == edgev1alpha1.NodeOffline {
				reason = edgev1alpha1.ReasonLeaseExpired
			}
			status, gotReason, msg := nodeReady(tc.state, reason, "lease", tc.runtime)
			if status != tc.wantStatus || gotReason != tc.wantReason || msg != tc.wantMessage {
				t.Fatalf("got %s %s %q; want %s %s %q", status, gotReason, msg, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
		})
	}
}
