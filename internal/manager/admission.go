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
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// admissionProbeTimeout bounds one dry-run create of the readiness check.
const admissionProbeTimeout = 5 * time.Second

// admitsServices is a readiness check: ready once create says the API
// server admits EdgeServices. Just after the CRDs are created,
// kube-apiserver answers an EdgeService create with 503 until its
// MutatingAdmissionPolicy has the new kind's schema (the service-finalizer
// policy's failurePolicy Ignore does not cover it), so a user who waited
// for the manager's rollout could not yet create a service. A 503, or no
// answer, keeps the manager unready; any other answer (created, invalid,
// forbidden) means admission was passed or cannot be told, and is kept:
// the check calls the API server until then only.
func admitsServices(create func(context.Context) error) func(*http.Request) error {
	var admitted atomic.Bool
	return func(r *http.Request) error {
		if admitted.Load() {
			return nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), admissionProbeTimeout)
		defer cancel()
		err := create(ctx)
		var answered apierrors.APIStatus
		if err != nil && (!errors.As(err, &answered) || apierrors.IsServiceUnavailable(err)) {
			return fmt.Errorf("the API server does not admit EdgeServices yet: %w", err)
		}
		admitted.Store(true)
		return nil
	}
}

// dryRunService creates an EdgeService in namespace as a dry run: it
// goes through admission and is never stored.
func dryRunService(c client.Client, namespace string) func(context.Context) error {
	return func(ctx context.Context) error {
		probe := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "edgeplane-admission-probe"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{
				Image: edgev1alpha1.ImageSpec{Ref: "probe@0#linux"}, Policy: edgev1alpha1.PolicyStatic,
			}},
		}
		return c.Create(ctx, probe, client.DryRunAll)
	}
}
