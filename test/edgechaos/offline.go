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

package edgechaos

import (
	"context"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// offline lists the nodes the manager declared offline since: none may
// be, when every fault is shorter than the grace period and a killed
// replica leaves the other to move to.
func (r *run) offline(ctx context.Context, since time.Time) ([]string, error) {
	list := &eventsv1.EventList{}
	if err := r.c.List(ctx, list, client.InNamespace("default")); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == "NodeOffline" && e.Regarding.Kind == "EdgeNode" && !e.CreationTimestamp.Time.Before(since) {
			out = append(out, e.Regarding.Name+": "+strings.TrimSpace(e.Note))
		}
	}
	return out, nil
}
