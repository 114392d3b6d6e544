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
	"github.com/moby/moby/api/types/jsonstream"

	"github.com/edgeplane/edgeplane/internal/agent"
)

// pullLayer is one layer's place in a pull: bytes received of its size.
type pullLayer struct{ done, total int64 }

// pullLayers sums a pull's progress stream over its layers. Engines send
// one message per layer and step: "Pulling fs layer", "Downloading" with
// bytes (current of total), "Download complete", "Extracting" (bytes
// again, of the same size), "Pull complete". Only downloads count as
// bytes received; a layer that completed counts whole.
type pullLayers map[string]*pullLayer

// add takes one message in; it says whether anything moved, and the sum.
func (l pullLayers) add(id, status string, p *jsonstream.Progress) (agent.PullProgress, bool) {
	if id == "" || status == "" {
		return l.sum(status), status != ""
	}
	layer := l[id]
	if layer == nil {
		layer = &pullLayer{}
		l[id] = layer
	}
	before := *layer
	switch status {
	case "Downloading":
		if p != nil {
			layer.done, layer.total = p.Current, max(p.Total, layer.total)
		}
	case "Download complete", "Pull complete", "Already exists", "Extracting", "Verifying Checksum":
		if layer.total > 0 {
			layer.done = layer.total
		}
	}
	moved := *layer != before || status != "Downloading"
	return l.sum(status), moved
}

func (l pullLayers) sum(status string) agent.PullProgress {
	out := agent.PullProgress{Status: status}
	for _, layer := range l {
		out.Done += layer.done
		out.Total += layer.total
	}
	return out
}
