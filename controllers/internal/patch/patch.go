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

// Package patch holds what the reconcilers' writes share: the field
// manager they write under and how they set a finalizer.
package patch

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// FieldOwner is the field manager of every write the controllers make, so
// that server-side apply keeps their fields apart from the agents'.
const FieldOwner = "edgeplane-controller"

// SetFinalizer adds (add) or removes edgeplane's finalizer f. A merge patch
// replaces the whole finalizer list, so one computed from a stale copy
// would drop a finalizer another controller added meanwhile; the
// resourceVersion in the patch turns that into a conflict, and the
// reconcile is retried from a fresh copy.
func SetFinalizer(ctx context.Context, c client.Client, obj client.Object, f string, add bool) error {
	if controllerutil.ContainsFinalizer(obj, f) == add {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	if add {
		controllerutil.AddFinalizer(obj, f)
	} else {
		controllerutil.RemoveFinalizer(obj, f)
	}
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("patching finalizer %s: %w", f, err)
	}
	return nil
}
