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

package upgrade

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// sampler reads every node's status twice a second: whether it is
// online, and which container runs each instance at each revision. An
// instance whose container at one revision changes (another id, or
// started again) was restarted.
type sampler struct {
	c     client.Client
	nodes []string

	mu sync.Mutex
	// runs are, per node, instance and revision, the containers seen
	// running it (id and start time).
	runs map[string]map[string]bool
	// offlineSeen are the nodes seen not online, with what they said.
	offlineSeen map[string]string
	forgotten   map[string]bool
}

func newSampler(c client.Client, nodes []string) *sampler {
	return &sampler{c: c, nodes: nodes, runs: map[string]map[string]bool{}, offlineSeen: map[string]string{}, forgotten: map[string]bool{}}
}

func (s *sampler) run(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *sampler) sample(ctx context.Context) {
	list := &edgev1alpha1.EdgeNodeList{}
	if err := s.c.List(ctx, list); err != nil {
		return // the next tick reads again; the run's end cuts a list short
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range list.Items {
		if n.Status.Status != edgev1alpha1.NodeOnline {
			if _, seen := s.offlineSeen[n.Name]; !seen {
				s.offlineSeen[n.Name] = fmt.Sprintf("%q at %s", n.Status.Status, time.Now().Format(time.TimeOnly))
			}
		}
		if s.forgotten[n.Name] {
			continue
		}
		for _, c := range n.Status.Containers {
			if c.TaskID == "" || c.ID == "" || c.State != edgev1alpha1.ContainerRunning || c.StartedTime == nil {
				continue
			}
			key := fmt.Sprintf("%s %s revision %d", n.Name, c.TaskID, c.Revision)
			if s.runs[key] == nil {
				s.runs[key] = map[string]bool{}
			}
			s.runs[key][c.ID+" started "+c.StartedTime.UTC().Format(time.RFC3339)] = true
		}
	}
}

// forget stops following the containers of nodes whose containers end
// with their agent (simulated ones), from now on.
func (s *sampler) forget(nodes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range nodes {
		s.forgotten[n] = true
	}
}

// restarts counts the containers started again at a revision their
// instance already ran, and says which.
func (s *sampler) restarts(logf func(string, ...any)) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for key, runs := range s.runs {
		if len(runs) > 1 {
			n += len(runs) - 1
			var seen []string
			for r := range runs {
				seen = append(seen, r)
			}
			sort.Strings(seen)
			logf("%s restarted: %v", key, seen)
		}
	}
	return n
}

// offline counts the nodes seen not online, and says which.
func (s *sampler) offline(logf func(string, ...any)) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, what := range s.offlineSeen {
		logf("node %s was seen %s", n, what)
	}
	return len(s.offlineSeen)
}
