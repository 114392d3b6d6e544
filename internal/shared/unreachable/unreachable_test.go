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

package unreachable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestIs(t *testing.T) {
	gr := schema.GroupResource{Group: "edge.edgeplane.io", Resource: "edgenodes"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("Post %q: dial tcp 127.0.0.1:6443: connect: connection refused", "https://127.0.0.1:6443"), true},
		{nil, false},
		{context.DeadlineExceeded, true},
		{apierrors.NewServiceUnavailable("etcd is down"), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewInternalError(errors.New("boom")), true},
		{apierrors.NewTimeoutError("timed out", 1), true},
		{apierrors.NewForbidden(gr, "edge-02", errors.New("not yours")), false},
		{apierrors.NewConflict(gr, "edge-01", errors.New("changed")), false},
		{apierrors.NewInvalid(schema.GroupKind{Group: "edge.edgeplane.io", Kind: "EdgeNode"}, "edge-01", nil), false},
		{apierrors.NewGenericServerResponse(http.StatusBadGateway, "GET", gr, "edge-01", "", 0, true), true},
	} {
		if got := Is(tc.err); got != tc.want {
			t.Errorf("Is(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
