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

// Package controllers holds the reconcilers of edgeplane, one per kind.
package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldOwner is the field manager of every write the controllers make, so
// that server-side apply keeps their fields apart from the agents'.
const FieldOwner = "edgeplane-controller"

// setCondition sets a condition on a copy of conds and returns it; the
// transition time moves only when the status does.
func setCondition(conds []metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	meta.SetStatusCondition(&out, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	return out
}
