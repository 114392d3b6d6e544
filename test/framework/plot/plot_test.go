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

package plot

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSave(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		series  []Series
		plotted bool
		legend  []string // names the file must show
		absent  []string // names it must not
	}{
		{"two lines", []Series{{Name: "samples", Points: []XY{{0, 1}, {1, 2}}}, {Name: "fit", Points: []XY{{0, 1}, {1, 2}}, LineOnly: true}},
			true, []string{"samples", "fit"}, nil},
		{"an empty series is left out of the legend", []Series{{Name: "direct"}, {Name: "hub", Points: []XY{{250, 3}}}},
			true, []string{"hub"}, []string{"direct"}},
		{"samples not measured are left out", []Series{{Name: "rss", Points: []XY{{0, math.NaN()}, {1, 5}, {2, math.Inf(1)}}}},
			true, []string{"rss"}, nil},
		{"nothing to draw", []Series{{Name: "a"}, {Name: "b", Points: []XY{{1, math.NaN()}}}}, false, nil, nil},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.Repeat("x", i+1)+".svg")
			plotted, err := Save(file, Figure{Title: "a figure", X: "minutes", Y: "MiB", Series: tc.series})
			if err != nil || plotted != tc.plotted {
				t.Fatalf("Save = %v, %v; want plotted %v", plotted, err, tc.plotted)
			}
			data, err := os.ReadFile(file)
			if !tc.plotted {
				if !os.IsNotExist(err) {
					t.Errorf("a figure without points wrote %s (%v)", file, err)
				}
				return
			}
			if err != nil || !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "a figure") {
				t.Fatalf("%s is no SVG plot titled 'a figure': %v", file, err)
			}
			for _, name := range tc.legend {
				if !strings.Contains(string(data), ">"+name+"<") {
					t.Errorf("the legend lacks %q", name)
				}
			}
			for _, name := range tc.absent {
				if strings.Contains(string(data), ">"+name+"<") {
					t.Errorf("the legend shows %q, which has no point", name)
				}
			}
		})
	}
}
