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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/conditions"
	"github.com/edgeplane/edgeplane/internal/shared/text"
)

// nodeReady is a node's Ready condition from its liveness and the
// RuntimeReady condition its agent reports: Unknown while offline (nothing
// the agent said is current), False while the agent is alive but its
// engine is not, else True.
func nodeReady(state edgev1alpha1.NodeState, reason, message string, runtime *metav1.Condition) (metav1.ConditionStatus, string, string) {
	if state != edgev1alpha1.NodeOnline {
		return metav1.ConditionUnknown, reason, message
	}
	if runtime != nil && runtime.Status == metav1.ConditionFalse {
		msg := "The agent renews its Lease, but its container runtime does not answer"
		if runtime.Message != "" {
			msg += ": " + runtime.Message
		}
		return metav1.ConditionFalse, edgev1alpha1.ReasonRuntimeUnreachable, text.Cut(msg, conditions.MaxItemText)
	}
	return metav1.ConditionTrue, reason, message
}

// runtimeDown says whether a node's agent reports its engine unreachable.
func runtimeDown(n *edgev1alpha1.EdgeNode) bool {
	return meta.IsStatusConditionFalse(n.Status.Conditions, edgev1alpha1.ConditionRuntimeReady)
}

// Available is a node that can run instances: online, with an engine that
// answers (or that has not said otherwise).
func Available(n *edgev1alpha1.EdgeNode) bool {
	return n.Status.Status == edgev1alpha1.NodeOnline && !runtimeDown(n)
}
