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

package apiserver

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// ForceDelete runs the delete-by-path step for one service as the cache
// saw it, so that a test can hand it a copy the API server has moved past.
func ForceDelete(ctx context.Context, c client.Client, seen *edgev1alpha1.EdgeService, path string) error {
	s := &Server{writer: c, live: c}
	return s.forceDelete(ctx, seen, path)
}
