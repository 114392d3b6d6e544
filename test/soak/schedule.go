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
	"sort"
	"time"
)

// Moments spreads a fault meant every `every` over a run of d: as many as
// fit (one at least), evenly, none at the very start or end, so that the
// first and last windows are not the only ones hit and a short run still
// meets each fault once.
func Moments(d, every time.Duration) []time.Duration {
	if every <= 0 {
		return nil
	}
	n := max(1, int(d/every))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d * time.Duration(i+1) / time.Duration(n+1)
	}
	return out
}

// Fault is a kind of fault the run injects.
type Fault string

// The faults.
const (
	FaultFailover Fault = "failover"
	FaultCut      Fault = "cut"
	FaultPause    Fault = "apiserver-pause"
)

// Planned is a fault at a moment of the run.
type Planned struct {
	At    time.Duration
	Fault Fault
}

// Timeline merges each fault's moments, in time order. The faults run
// one after another: a failover while the API server is paused would
// test the pause, not the failover. At a tie the order of kinds holds.
func Timeline(d time.Duration, every map[Fault]time.Duration) []Planned {
	var out []Planned
	for _, f := range []Fault{FaultPause, FaultFailover, FaultCut} {
		for _, at := range Moments(d, every[f]) {
			out = append(out, Planned{at, f})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// Change is a kind of churn action.
type Change string

// The churn's actions on the long-lived services.
const (
	// ChangeEnv edits the containers' environment (the API).
	ChangeEnv Change = "env"
	// ChangeVersion sets the image's tag (the facade's PATCH).
	ChangeVersion Change = "version"
	// ChangeScale moves factor between 2 and 3 (the facade's PATCH).
	ChangeScale Change = "scale"
	// ChangePause edits a rolling service and pauses its rollout at once,
	// resuming it a little later (the API).
	ChangePause Change = "pause"
	// ChangeRollback returns a service to its previous record (the
	// facade's rollback).
	ChangeRollback Change = "rollback"
	// ChangeBadImage gives a rolling service with autoRollback an image
	// whose containers fail: its canary fails and the manager rolls it
	// back (the API).
	ChangeBadImage Change = "bad-image"
)

// changePlan is the churn's cycle: mostly edits, as people make them;
// one in ten a rollback or a pause, one in twenty a failing image.
var changePlan = []Change{
	ChangeEnv, ChangeVersion, ChangeEnv, ChangeScale, ChangeEnv, ChangePause, ChangeEnv, ChangeVersion, ChangeRollback, ChangeEnv,
	ChangeScale, ChangeEnv, ChangeVersion, ChangeEnv, ChangePause, ChangeEnv, ChangeScale, ChangeRollback, ChangeEnv, ChangeBadImage,
}

// Rolling says whether long-lived service i rolls out in waves (with a
// canary and autoRollback); the others change all at once.
func Rolling(i int) bool { return i%2 == 1 }

// Action is the i-th action of the churn over that many long-lived
// services: what it does and to which service. The services are taken
// in turn; each turn moves every service one step further along the
// plan, so that each meets every kind of action within len(changePlan)
// turns, whatever their count, and every turn keeps the plan's mix. An
// action that needs a rolling service (a pause, a failing image) moves
// to a neighbour that rolls; -1 when none does (a single service).
func Action(i, services int) (Change, int) {
	turn, s := i/services, i%services
	c := changePlan[(turn+s)%len(changePlan)]
	if (c == ChangePause || c == ChangeBadImage) && !Rolling(s) {
		switch {
		case s+1 < services:
			s++
		case s > 0:
			s--
		default:
			return c, -1
		}
	}
	return c, s
}
