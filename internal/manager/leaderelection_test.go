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

package manager

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeLock holds one record and counts the writes that reach it.
type fakeLock struct {
	resourcelock.Interface
	rec    resourcelock.LeaderElectionRecord
	writes int
}

func (f *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r := f.rec
	return &r, nil, nil
}
func (f *fakeLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	f.rec, f.writes = r, f.writes+1
	return nil
}
func (f *fakeLock) Identity() string { return "me" }

// A starting replica takes no lease from another holder during its
// hold-off, and takes a free one, or any after it, as the election asks.
func TestHoldOffLock(t *testing.T) {
	start := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		holder string
		after  time.Duration
		taken  bool
	}{
		{"another's lease within the hold-off", "dead-leader", 5 * time.Second, false},
		{"another's lease after the hold-off", "dead-leader", holdOff(15*time.Second, 2*time.Second), true},
		{"a released lease", "", 0, true},
		{"its own lease, renewed", "me", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			inner := &fakeLock{rec: resourcelock.LeaderElectionRecord{HolderIdentity: tc.holder}}
			l := &holdOffLock{Interface: inner, clock: clk, until: start.Add(holdOff(15*time.Second, 2*time.Second))}
			clk.SetTime(start.Add(tc.after))
			if _, _, err := l.Get(context.Background()); err != nil {
				t.Fatal(err)
			}
			err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
			if tc.taken != (err == nil) || tc.taken != (inner.writes == 1) {
				t.Fatalf("taken=%v: err %v, %d writes", tc.taken, err, inner.writes)
			}
			if !tc.taken && !errors.Is(err, errHoldingOff) {
				t.Fatalf("refused with %v", err)
			}
		})
	}
}
