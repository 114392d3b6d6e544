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

package heartbeat

import (
	"slices"
	"testing"
	"time"
)

// Only transitions are writes: the first heartbeat, the grace running
// out, the first heartbeat after; steady heartbeats and a gap shorter than
// the grace write nothing.
func TestGatewayTransitions(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		beat     string // a node's heartbeat at t, or "" to expire at t
		t        int
		wantOn   bool     // Beat's answer
		wantOffs []string // Expire's answer
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"steady heartbeats write once", []step{
			{"a", 0, true, nil}, {"a", 10, false, nil}, {"", 35, false, nil}, {"a", 20, false, nil}, {"", 59, false, nil},
		}},
		{"a gap shorter than the grace writes nothing", []step{
			{"a", 0, true, nil}, {"", 39, false, nil}, {"a", 39, false, nil}, {"", 78, false, nil},
		}},
		{"the grace running out, then a heartbeat", []step{
			{"a", 0, true, nil}, {"b", 5, true, nil}, {"", 40, false, []string{"a"}}, {"", 45, false, []string{"b"}},
			{"", 100, false, nil}, {"a", 101, true, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGateway(40 * time.Second)
			for i, s := range tc.steps {
				if s.beat != "" {
					if got := g.Beat(s.beat, at(s.t)); got != s.wantOn {
						t.Errorf("step %d: Beat(%s, %d) = %v", i, s.beat, s.t, got)
					}
					continue
				}
				if got := g.Expire(at(s.t)); !slices.Equal(got, s.wantOffs) {
					t.Errorf("step %d: Expire(%d) = %v, want %v", i, s.t, got, s.wantOffs)
				}
			}
		})
	}
}

// A node's last heartbeat and the count online follow its transitions;
// a node gone offline is not kept.
func TestGatewayConnected(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	g := NewGateway(40 * time.Second)
	g.Beat("a", t0)
	g.Beat("b", t0.Add(5*time.Second))
	g.Beat("a", t0.Add(10*time.Second))
	if last, ok := g.Last("a"); !ok || !last.Equal(t0.Add(10*time.Second)) || g.Connected() != 2 {
		t.Fatalf("Last(a) = %v, %v; Connected() = %d; want %v, true; 2", last, ok, g.Connected(), t0.Add(10*time.Second))
	}
	g.Expire(t0.Add(46 * time.Second))
	if _, ok := g.Last("b"); ok || g.Connected() != 1 || len(g.last) != 1 {
		t.Fatalf("after b's grace ran out: Last(b) found %v, Connected() = %d, %d kept; want not found, 1, 1", ok, g.Connected(), len(g.last))
	}
}
