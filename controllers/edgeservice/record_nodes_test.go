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

package edgeservice

import (
	"encoding/json"
	"fmt"
	"testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestCapRecordNodes(t *testing.T) {
	typical := func(n int) []edgev1alpha1.RecordNode {
		out := make([]edgev1alpha1.RecordNode, n)
		for i := range out {
			out[i] = edgev1alpha1.RecordNode{NodeID: fmt.Sprintf("%036d", i), NodeName: fmt.Sprintf("edge-linux-%04d", i), Address: "10.1.2.3:8080"}
		}
		return out
	}
	for _, c := range []struct {
		name          string
		nodes         []edgev1alpha1.RecordNode
		kept, omitted int
	}{
		{"none", nil, 0, 0},
		{"a few", typical(3), 3, 0},
		{"2,000 of typical names", typical(2000), 2000, 0},
		{"5,000 of typical names", typical(5000), 2496, 2504},
	} {
		kept, omitted := CapRecordNodes(c.nodes)
		if len(kept) != c.kept || int(omitted) != c.omitted {
			t.Errorf("%s: kept %d, omitted %d; want %d and %d", c.name, len(kept), omitted, c.kept, c.omitted)
		}
		if len(kept) > 0 && kept[0] != c.nodes[0] {
			t.Errorf("%s: the first node is not kept", c.name)
		}
		// What is kept fits in the budget as the API server stores it,
		// and one node more would not.
		if size := jsonSize(kept); size > maxRecordNodeBytes {
			t.Errorf("%s: the nodes kept are %d bytes of JSON, more than %d", c.name, size, maxRecordNodeBytes)
		}
		if omitted > 0 {
			if size := jsonSize(c.nodes[:len(kept)+1]); size <= maxRecordNodeBytes {
				t.Errorf("%s: one node more is %d bytes of JSON, which fits", c.name, size)
			}
		}
	}
}

func jsonSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
