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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// wideChange changes the first wide service's configuration and times it
// until every instance runs the new revision, all at once and then in
// waves (RollingUpdate, maxUnavailable 25%); it also says how large the
// largest service object is.
func wideChange(ctx context.Context, c client.Client, view client.Reader, factor int) (string, error) {
	svc := &edgev1alpha1.EdgeService{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "svc-00000"}, svc); err != nil {
		return "", err
	}
	largest := 0
	list := &edgev1alpha1.EdgeServiceList{}
	if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
		return "", err
	}
	for i := range list.Items {
		if b, err := json.Marshal(&list.Items[i]); err == nil {
			largest = max(largest, len(b))
		}
	}
	// timed makes one change and waits until every instance runs it.
	timed := func(change string) (time.Duration, error) {
		s := &edgev1alpha1.EdgeService{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), s); err != nil {
			return 0, err
		}
		rev := s.Status.Revision
		began := time.Now()
		if err := c.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(change))); err != nil {
			return 0, err
		}
		err := procs.WaitFor(ctx, "every instance at the new revision", 500*time.Millisecond, func() (bool, error) {
			s := &edgev1alpha1.EdgeService{}
			if err := view.Get(ctx, client.ObjectKeyFromObject(svc), s); err != nil {
				return false, err
			}
			return s.Status.Revision > rev && s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == int32(factor), nil
		})
		return time.Since(began), err
	}
	all, err := timed(`{"spec":{"config":{"linux":{"env":["WIDE=2"]}}}}`)
	if err != nil {
		return "", err
	}
	// The same service rolled out in waves: at most a quarter of its
	// instances unavailable at once, node by node.
	rolling, err := timed(`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%"}},"config":{"linux":{"env":["WIDE=3"]}}}}`)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("wide: instances_per_service=%d change_s=%.1f rolling_change_s=%.1f largest_service_kib=%.1f",
		factor, all.Seconds(), rolling.Seconds(), float64(largest)/1024), nil
}
