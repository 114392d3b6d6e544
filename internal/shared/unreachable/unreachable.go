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

// Package unreachable tells an error that means the API server could not
// be reached, or could not answer, from one where it answered and refused.
package unreachable

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Is says whether err means the API server could not be reached or could
// not answer (dial, TLS, timeout, reset; 429 and 5xx), rather than that
// it refused the call (403, 409, 422): a refusal proves the link works.
func Is(err error) bool {
	if err == nil {
		return false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true
	}
	code := int(st.Status().Code)
	return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}
