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
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// agentWatches opens the watch each real agent holds: its node's
// assignment, by name, from the API server. One simulator process plays
// every node through a few shared watches, which hides what a fleet of
// agents costs the API server: a watcher per node, each event matched
// against every watcher's selector. It returns the events delivered so far.
func agentWatches(ctx context.Context, cfg *rest.Config, nodes []string) (func() int64, error) {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		return nil, err
	}
	var events atomic.Int64
	for _, n := range nodes {
		go func() {
			// As a reflector does: bookmarks asked for, and a watch that
			// ends resumes from the last version seen.
			rv := ""
			for ctx.Err() == nil {
				w, err := c.Watch(ctx, &edgev1alpha1.NodeAssignmentList{}, client.MatchingFields{"metadata.name": n},
					&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
				if err != nil {
					rv = ""
					time.Sleep(time.Second)
					continue
				}
				for e := range w.ResultChan() {
					if o, ok := e.Object.(client.Object); ok && e.Type != watch.Error {
						rv = o.GetResourceVersion()
					}
					if e.Type != watch.Bookmark {
						events.Add(1)
					}
				}
			}
		}()
	}
	return events.Load, nil
}
