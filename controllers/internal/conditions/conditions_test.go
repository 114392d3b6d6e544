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

package conditions

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeplane/edgeplane/internal/shared/text"
)

func TestSummarize(t *testing.T) {
	failed := &Problem{"DeployFailed", "instance a failed"}
	progressing := &Problem{"Deploying", "1 instance is being deployed"}
	type want struct {
		status               metav1.ConditionStatus
		reason               string
		stalled, reconciling bool
	}
	for _, tc := range []struct {
		name                string
		failed, progressing *Problem
		want                want
	}{
		{"nothing wrong", nil, nil, want{metav1.ConditionTrue, "Ready", false, false}},
		{"a rollout under way", nil, progressing, want{metav1.ConditionFalse, "Deploying", false, true}},
		{"a failure", failed, nil, want{metav1.ConditionFalse, "DeployFailed", true, false}},
		{"a failure while others still deploy: the failure is the reason", failed, progressing, want{metav1.ConditionFalse, "DeployFailed", true, true}},
	} {
		conds := Summarize(nil, t0, 7, tc.failed, tc.progressing)
		ready := meta.FindStatusCondition(conds, "Ready")
		if ready == nil || ready.Status != tc.want.status || ready.Reason != tc.want.reason || ready.ObservedGeneration != 7 {
			t.Errorf("%s: Ready = %+v, want %s %s", tc.name, ready, tc.want.status, tc.want.reason)
		}
		// Abnormal-true conditions are True when they apply and absent otherwise.
		for typ, want := range map[string]bool{"Stalled": tc.want.stalled, "Reconciling": tc.want.reconciling} {
			if c := meta.FindStatusCondition(conds, typ); (c != nil) != want || c != nil && c.Status != metav1.ConditionTrue {
				t.Errorf("%s: %s = %+v, want present and True: %v", tc.name, typ, c, want)
			}
		}
	}
	// A failure while a rollout goes on: Stalled comes before Reconciling,
	// the order kstatus reads them in, even when Stalled was added last.
	both := Summarize(Summarize(nil, t0, 1, nil, progressing), t0, 2, failed, progressing)
	stalled := slices.IndexFunc(both, func(c metav1.Condition) bool { return c.Type == "Stalled" })
	reconciling := slices.IndexFunc(both, func(c metav1.Condition) bool { return c.Type == "Reconciling" })
	if stalled < 0 || reconciling < stalled {
		t.Errorf("Stalled at %d, Reconciling at %d: want Stalled first", stalled, reconciling)
	}
	// A recovery removes them.
	recovered := Summarize(Summarize(nil, t0, 1, failed, progressing), t0, 2, nil, nil)
	if len(recovered) != 1 || recovered[0].Type != "Ready" || recovered[0].Status != metav1.ConditionTrue {
		t.Errorf("after recovery: %+v, want Ready True alone", recovered)
	}
	// The transition time is the clock's, and moves only when the status does.
	before := Summarize(nil, t0, 1, nil, progressing)
	after := Summarize(before, t0.Add(time.Minute), 2, nil, &Problem{"Deploying", "2 instances are being deployed"})
	if got := meta.FindStatusCondition(after, "Ready").LastTransitionTime.Time; !got.Equal(t0) {
		t.Errorf("Ready's transition time = %v, want %v: its status did not change", got, t0)
	}
	done := Summarize(after, t0.Add(2*time.Minute), 3, nil, nil)
	if got := meta.FindStatusCondition(done, "Ready").LastTransitionTime.Time; !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("Ready's transition time = %v, want the time it turned True", got)
	}
}

// t0 is the fake clock's time in the condition tests.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestCaps(t *testing.T) {
	long := strings.Repeat("é", 600) // 1,200 bytes, two per rune
	for _, tc := range []struct {
		name  string
		items []string
		want  string
	}{
		{"a few, as they are", []string{"a", "b"}, "a; b"},
		{"more than five: five and a count", []string{"1", "2", "3", "4", "5", "6", "7"}, "1; 2; 3; 4; 5; and 2 more"},
	} {
		if got := CapList(tc.items); got != tc.want {
			t.Errorf("%s: CapList = %q, want %q", tc.name, got, tc.want)
		}
	}
	got := CapList([]string{long})
	if len(got) > MaxItemText || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("CapList of a long item: %d bytes, valid UTF-8 %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-5:])
	}
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = strings.Repeat("x", 4096)
	}
	if n := len(CapList(hundred)); n > maxListed*(MaxItemText+2)+20 {
		t.Errorf("100 messages of 4 KiB joined to %d bytes", n)
	}
	if got := text.Cut("short", 10); got != "short" {
		t.Errorf("capText cut a short text: %q", got)
	}
}
