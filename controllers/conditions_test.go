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

package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSummarize(t *testing.T) {
	failed := &problem{"DeployFailed", "instance a failed"}
	progressing := &problem{"Deploying", "1 instance is being deployed"}
	type want struct {
		status               metav1.ConditionStatus
		reason               string
		stalled, reconciling bool
	}
	for _, tc := range []struct {
		name                string
		failed, progressing *problem
		want                want
	}{
		{"nothing wrong", nil, nil, want{metav1.ConditionTrue, "Ready", false, false}},
		{"a rollout under way", nil, progressing, want{metav1.ConditionFalse, "Deploying", false, true}},
		{"a failure", failed, nil, want{metav1.ConditionFalse, "DeployFailed", true, false}},
		{"a failure while others still deploy: the failure is the reason", failed, progressing, want{metav1.ConditionFalse, "DeployFailed", true, true}},
	} {
		conds := summarize(nil, 7, tc.failed, tc.progressing)
		ready := meta.FindStatusCondition(conds, "Ready")
		if ready == nil || ready.Status != tc.want.status || ready.Reason != tc.want.reason || ready.ObservedGeneration != 7 {
			t.Errorf("%s: Ready = %+v, want %s %s", tc.name, ready, tc.want.status, tc.want.reason)
		}
		if got := meta.IsStatusConditionTrue(conds, "Stalled"); got != tc.want.stalled {
			t.Errorf("%s: Stalled = %v, want %v", tc.name, got, tc.want.stalled)
		}
		if got := meta.IsStatusConditionTrue(conds, "Reconciling"); got != tc.want.reconciling {
			t.Errorf("%s: Reconciling = %v, want %v", tc.name, got, tc.want.reconciling)
		}
	}
	// The transition time moves only when the status does.
	before := summarize(nil, 1, nil, progressing)
	after := summarize(before, 2, nil, &problem{"Deploying", "2 instances are being deployed"})
	if !meta.FindStatusCondition(after, "Ready").LastTransitionTime.Equal(&meta.FindStatusCondition(before, "Ready").LastTransitionTime) {
		t.Error("Ready's transition time moved though its status did not")
	}
}
