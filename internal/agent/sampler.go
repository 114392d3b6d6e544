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

package agent

import (
	"context"
	"sync"
	"time"
)

// sample takes the figures of edgeplane's running containers every
// MetricsInterval, on a goroutine of its own: an engine may take a while
// to answer (Docker Engine's stats wait for its collector's next
// one-second tick), and nothing else waits for figures. Figures due
// within half an interval are taken early when changes wait to be
// reported, so that they ride along in that report.
func (s *node) sample(ctx context.Context) {
	next := s.metricsFrom
	for ctx.Err() == nil {
		now := s.o.Clock.Now()
		if s.health.ready() && sampleDue(s.reporter.isDirty(), now, next, s.o.MetricsInterval) {
			s.cache.merge(s.sampleStats(ctx), s.o.Clock.Now())
			next = s.o.Clock.Now().Add(s.o.MetricsInterval)
		}
		select {
		case <-ctx.Done():
		case <-s.o.Clock.After(s.o.Tick):
		}
	}
}

// sampleDue says whether a node samples its containers' figures now: when
// they are due, or when changes wait to be reported and the figures are
// due within half an interval.
func sampleDue(dirty bool, now, next time.Time, interval time.Duration) bool {
	return !now.Before(next) || (dirty && !now.Before(next.Add(-interval/2)))
}

// maxSampling bounds the stats calls of one node at once.
const maxSampling = 8

// sampleStats samples the running containers, maxSampling at a time, each
// call bounded.
func (s *node) sampleStats(ctx context.Context) map[string]Stats {
	ids := s.cache.running()
	out := make(map[string]Stats, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxSampling)
	for _, id := range ids {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			var st Stats
			err := within(ctx, engineTimeout, func(ctx context.Context) (err error) { st, err = s.rt.Stats(ctx, id); return err })
			if err != nil {
				s.o.Log.V(1).Info("Sampling a container failed", "node", s.Name, "container", id, "error", err.Error())
				return
			}
			mu.Lock()
			out[id] = st
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}
