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

package manager

import (
	"net/http/httptest"
	"testing"
)

// A replica serving the facade is unready until the facade answers its
// routes, and ready from then on.
func TestFacadeSynced(t *testing.T) {
	synced := false
	check := facadeSynced(func() bool { return synced })
	if err := check(httptest.NewRequest("GET", "/readyz", nil)); err == nil {
		t.Fatal("ready before the facade's indexes synced")
	}
	synced = true
	if err := check(httptest.NewRequest("GET", "/readyz", nil)); err != nil {
		t.Fatalf("unready once the facade synced: %v", err)
	}
}
