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

package kubectledge

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestRolloutStatus(t *testing.T) {
	svc := func(gen, observed, rev, deployed int64, ready, replicas int32, conds ...metav1.Condition) *edgev1alpha1.EdgeService {
		s := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: gen}}
		s.Status = edgev1alpha1.EdgeServiceStatus{ObservedGeneration: observed, Revision: rev, DeployedRevision: deployed,
			ReadyReplicas: ready, Replicas: replicas, UpdatedReplicas: replicas, Conditions: conds}
		return s
	}
	inWaves := func(updated int32, paused bool) *edgev1alpha1.EdgeService {
		s := svc(3, 3, 3, 2, 1, 4)
		s.Status.UpdatedReplicas, s.Spec.Paused = updated, paused
		return s
	}
	stalled := metav1.Condition{Type: conditionStalled, Status: metav1.ConditionTrue, Reason: "DeployFailed", Message: "pull denied"}
	for _, tc := range []struct {
		name    string
		svc     *edgev1alpha1.EdgeService
		want    string
		done    bool
		stalled bool
	}{
		{"a generation not yet observed", svc(3, 2, 2, 2, 4, 4), "Waiting for edgeservice.edge.edgeplane.io/web's generation 3 to be observed...", false, false},
		{"under way", svc(3, 3, 3, 2, 1, 4), "Waiting for edgeservice.edge.edgeplane.io/web's rollout to finish: 1 of 4 instances run revision 3...", false, false},
		{"every instance at the revision", svc(3, 3, 3, 3, 4, 4), "edgeservice.edge.edgeplane.io/web successfully rolled out: revision 3, 4 of 4 instances ready", true, false},
		{"ready, but at an older revision", svc(3, 3, 3, 2, 4, 4), "Waiting for edgeservice.edge.edgeplane.io/web's rollout to finish: 4 of 4 instances run revision 3...", false, false},
		{"in waves", inWaves(2, false), "Waiting for edgeservice.edge.edgeplane.io/web's rollout to finish: 2 of 4 instances updated to revision 3, 1 run it...", false, false},
		{"paused", inWaves(2, true), "Waiting for edgeservice.edge.edgeplane.io/web's rollout to finish: 2 of 4 instances updated to revision 3, 1 run it (paused)...", false, false},
		{"stalled", svc(3, 3, 3, 2, 3, 4, stalled), "", false, true},
		{"a stall of an older generation is not yet read", svc(4, 3, 3, 2, 3, 4, stalled), "Waiting for edgeservice.edge.edgeplane.io/web's generation 4 to be observed...", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, done, err := rolloutStatus(tc.svc)
			if msg != tc.want || done != tc.done || errors.Is(err, errStalled) != tc.stalled {
				t.Errorf("rolloutStatus = %q, %v, %v; want %q, %v, stalled %v", msg, done, err, tc.want, tc.done, tc.stalled)
			}
		})
	}
}
