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

package docker

import (
	"testing"

	"github.com/moby/moby/api/types/jsonstream"

	"github.com/edgeplane/edgeplane/internal/agent"
)

// TestPullLayers follows a pull's stream as engines send it: per layer,
// "Pulling fs layer", "Downloading" with bytes, "Download complete",
// "Extracting", "Pull complete"; and lines about the image as a whole.
func TestPullLayers(t *testing.T) {
	bytes := func(cur, total int64) *jsonstream.Progress { return &jsonstream.Progress{Current: cur, Total: total} }
	l := pullLayers{}
	for i, step := range []struct {
		id, status string
		p          *jsonstream.Progress
		moved      bool
		want       agent.PullProgress
	}{
		{"", "Pulling from edgeplane/big", nil, true, agent.PullProgress{Status: "Pulling from edgeplane/big"}},
		{"a1", "Pulling fs layer", nil, true, agent.PullProgress{Status: "Pulling fs layer"}},
		{"b2", "Pulling fs layer", nil, true, agent.PullProgress{Status: "Pulling fs layer"}},
		{"a1", "Downloading", bytes(100, 1000), true, agent.PullProgress{Done: 100, Total: 1000, Status: "Downloading"}},
		{"a1", "Downloading", bytes(100, 1000), false, agent.PullProgress{Done: 100, Total: 1000, Status: "Downloading"}},
		{"b2", "Downloading", bytes(50, 500), true, agent.PullProgress{Done: 150, Total: 1500, Status: "Downloading"}},
		{"a1", "Download complete", nil, true, agent.PullProgress{Done: 1050, Total: 1500, Status: "Download complete"}},
		{"a1", "Extracting", bytes(10, 1000), true, agent.PullProgress{Done: 1050, Total: 1500, Status: "Extracting"}},
		{"a1", "Pull complete", nil, true, agent.PullProgress{Done: 1050, Total: 1500, Status: "Pull complete"}},
		{"b2", "Pull complete", nil, true, agent.PullProgress{Done: 1500, Total: 1500, Status: "Pull complete"}},
		{"", "", nil, false, agent.PullProgress{Done: 1500, Total: 1500}},
	} {
		got, moved := l.add(step.id, step.status, step.p)
		if got != step.want || moved != step.moved {
			t.Fatalf("step %d (%s %s): %+v moved=%v, want %+v moved=%v", i, step.id, step.status, got, moved, step.want, step.moved)
		}
	}
}
