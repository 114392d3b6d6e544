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
	"errors"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// facadeSynced is the readiness of a replica serving the facade: ready once
// the facade answers its routes, which it does a moment after the cache
// has synced (its own indexes fill from the informers' handlers).
func facadeSynced(synced func() bool) healthz.Checker {
	return func(*http.Request) error {
		if !synced() {
			return errors.New("the facade's indexes have not synced yet")
		}
		return nil
	}
}
