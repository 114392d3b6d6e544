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
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// CapRecordNodes lets the envtest specs build a record's nodes as the
// reconciler does.
var CapRecordNodes = capRecordNodes

// WriteAssignment makes one write of a node's assignment setting one
// service's entry, as the assignment writer does, through c.
func WriteAssignment(ctx context.Context, c client.Client, node, key string, e *edgev1alpha1.AssignedService) error {
	return newAssignmentWriter(c, c, nil).apply(ctx, node, []assignmentOp{{key: key, entry: e}})
}
