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

// Package conditions computes the status conditions the reconcilers
// write, and bounds the text they put in conditions and events.
package conditions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/text"
)

// Set sets a condition on a copy of conds and returns it; the
// transition time moves, to now, only when the status does.
func Set(conds []metav1.Condition, now time.Time, generation int64, typ string, status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	meta.SetStatusCondition(&out, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	})
	return out
}

// Problem is why an object is not ready: a condition reason and message.
type Problem struct{ Reason, Message string }

// ProblemOf is the problem a condition states.
func ProblemOf(c *metav1.Condition) *Problem {
	return &Problem{Reason: c.Reason, Message: c.Message}
}

// Summary conditions, read by GitOps tools and kubectl wait.
const (
	conditionReconciling = edgev1alpha1.ConditionReconciling
	conditionStalled     = edgev1alpha1.ConditionStalled
	reasonReady          = "Ready"
)

// Summarize sets Ready, Reconciling and Stalled on a copy of conds: Ready
// is True when nothing is in progress and nothing failed, else False with
// the failure's reason (first) or the progress'; Stalled mirrors the
// failure and Reconciling the progress.
func Summarize(conds []metav1.Condition, now time.Time, gen int64, failed, progressing *Problem) []metav1.Condition {
	ready := Problem{reasonReady, "Nothing is in progress and nothing failed."}
	switch {
	case failed != nil:
		ready = *failed
	case progressing != nil:
		ready = *progressing
	}
	status := metav1.ConditionTrue
	if failed != nil || progressing != nil {
		status = metav1.ConditionFalse
	}
	out := Set(conds, now, gen, edgev1alpha1.ConditionReady, status, ready.Reason, ready.Message)
	out = setAbnormal(out, now, gen, conditionStalled, failed)
	out = setAbnormal(out, now, gen, conditionReconciling, progressing)
	// kstatus goes by the first of the two it finds True: Stalled comes
	// first, so that a failure reads Failed while other instances still
	// deploy, whichever condition was added last.
	if i := slices.IndexFunc(out, func(c metav1.Condition) bool { return c.Type == conditionReconciling }); i >= 0 {
		c := out[i]
		out = append(slices.Delete(out, i, i+1), c)
	}
	return out
}

// setAbnormal sets an abnormal-true condition: True with the problem, or
// absent when there is none, as Flux does. kstatus reads absent as False;
// every status write carries one condition less of each.
func setAbnormal(conds []metav1.Condition, now time.Time, gen int64, typ string, p *Problem) []metav1.Condition {
	if p == nil {
		out := append([]metav1.Condition(nil), conds...)
		meta.RemoveStatusCondition(&out, typ)
		return out
	}
	return Set(conds, now, gen, typ, metav1.ConditionTrue, p.Reason, p.Message)
}

// Bounds on what the controllers write, so that a status or an event is
// always one the API server accepts, however many instances fail and
// however long their messages: a condition message may hold 32 KiB, an
// event note 1 KiB.
const (
	maxListed    = 5
	MaxItemText  = 512
	MaxEventNote = 1000
)

// CapList joins at most maxListed items, each cut to MaxItemText bytes,
// and says how many more there are.
func CapList(items []string) string {
	shown := items
	if len(shown) > maxListed {
		shown = shown[:maxListed]
	}
	parts := make([]string, 0, len(shown)+1)
	for _, it := range shown {
		parts = append(parts, text.Cut(it, MaxItemText))
	}
	if more := len(items) - len(shown); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}
