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

package soak

import (
	"math"
	"strings"
	"testing"
)

func TestSamplesWriteCSV(t *testing.T) {
	var s Samples
	s.Add(0, "hub-a rss", MiB, 40)
	s.Add(0, "EdgeService", Objects, 100)
	s.Add(1, "hub-a rss", MiB, 41.5)
	s.Add(1, "EdgeService", Objects, math.NaN()) // the API server paused
	s.Add(2, "leader rss", MiB, 90)              // a series that starts late
	var b strings.Builder
	if err := s.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "minute,hub-a rss (MiB),EdgeService (objects),leader rss (MiB)\n0.00,40,100,\n1.00,41.5,,\n2.00,,,90\n"
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
	if all := s.All(); len(all) != 3 || all[0].Name != "hub-a rss" || len(all[0].Points) != 2 || all[2].Unit != MiB {
		t.Errorf("All = %v", all)
	}
}
