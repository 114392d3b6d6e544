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
	"fmt"
	"maps"
	"reflect"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/text"
	"github.com/edgeplane/edgeplane/internal/shared/unreachable"
)

// reporter is the node's status manager: the one part that writes its
// half of EdgeNode status. Parts tell it that something changed; it holds
// the changes until the node settles, at most MinReportInterval from the
// first of them, builds the report from what the parts hold, and applies
// it when it differs from the last one, while the link allows. Pulls
// under way are reported every pullReportEvery.
type reporter struct {
	s    *node
	wake chan struct{}
	// link is the reporter's way onto the node's link: its back-off is
	// its own, and never holds up a renewal.
	link *writer

	mu sync.Mutex
	// dirty says a change waits to be reported; since is when the first of
	// them was seen; gen counts changes, so that one made while a report
	// is written is not lost.
	dirty bool
	since time.Time
	gen   uint64
	// desired is the dispatch loop's latest; serviceOfTask is derived.
	desired       map[string]want
	serviceOfTask map[string]string

	// Only run's goroutine uses these.
	reported        []edgev1alpha1.ObservedContainer
	reportedCounts  *Counts
	reportedRuntime *metav1.Condition
	reportedAddress string
	// reportedInfo is the engine's word on the node last reported: a
	// new one (read late, or changed) is reported even when nothing
	// else changed.
	reportedInfo *nodeInfo
	lastPull     time.Time
	// dropped is how many containers the last report left out.
	dropped int
	// apply writes a report; ApplyStatus unless a test says otherwise.
	apply func(ctx context.Context, r report) error
}

// report is one write of the node's half of its status.
type report struct {
	info       edgev1alpha1.NodeInfo
	boot       *metav1.Time
	runtime    *metav1.Condition
	containers []edgev1alpha1.ObservedContainer
	counts     Counts
}

// pullReportEvery paces the reports of pulls under way: progress is worth
// a write now and then, not per chunk received.
const pullReportEvery = 5 * time.Second

func newReporter(s *node) *reporter {
	r := &reporter{s: s, wake: make(chan struct{}, 1), link: s.link.writer(), dirty: true}
	r.apply = func(ctx context.Context, rep report) error {
		return ApplyStatus(ctx, s.c, s.Name, rep.info, rep.boot, rep.runtime, rep.containers, rep.counts)
	}
	return r
}

// changed notes a change to report.
func (r *reporter) changed() {
	r.mu.Lock()
	if !r.dirty {
		r.dirty, r.since = true, r.s.o.Clock.Now()
	}
	r.gen++
	r.mu.Unlock()
	r.poke()
}

// linkBack reports what was held while the link was down at once.
func (r *reporter) linkBack() {
	r.mu.Lock()
	if r.dirty {
		r.since = r.s.o.Clock.Now().Add(-r.s.o.MinReportInterval)
	}
	r.mu.Unlock()
	r.poke()
}

func (r *reporter) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// isDirty says whether changes wait to be reported.
func (r *reporter) isDirty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dirty
}

// setDesired takes the dispatch loop's desired state; a change of the
// node's placements changes its counts.
func (r *reporter) setDesired(desired map[string]want) {
	sot := make(map[string]string, len(desired))
	for task, w := range desired {
		sot[task] = w.svc.Namespace + "/" + w.svc.Name
	}
	r.mu.Lock()
	same := maps.Equal(sot, r.serviceOfTask)
	r.desired, r.serviceOfTask = desired, sot
	r.mu.Unlock()
	if !same {
		r.changed()
	}
}

// reportDue says whether a node reports its changes now: at once when it
// has settled (no instance between two states), else once window has
// passed since the first of them, so that a step on the way (a container
// created, running a moment later) goes out with the state it leads to,
// in one apply.
func reportDue(dirty, settled bool, since, now time.Time, window time.Duration) bool {
	return dirty && (settled || !now.Before(since.Add(window)))
}

// run reports until ctx is done.
func (r *reporter) run(ctx context.Context) {
	s := r.s
	for ctx.Err() == nil {
		now := s.o.Clock.Now()
		if now.Sub(r.lastPull) >= pullReportEvery && s.workers.pulling() {
			r.lastPull = now
			r.changed()
		}
		r.mu.Lock()
		dirty, since, gen := r.dirty, r.since, r.gen
		r.mu.Unlock()
		settled := dirty && s.workers.settled(now, s.o.MinReportInterval)
		wait := pullReportEvery
		switch {
		case !dirty:
		case !reportDue(dirty, settled, since, now, s.o.MinReportInterval):
			wait = since.Add(s.o.MinReportInterval).Sub(now)
		case s.silent(now) || !s.registered.Load():
			wait = s.o.Tick
		case !s.health.probedOnce() || s.health.ready() && !s.cache.listed.Load():
			// What runs is not known yet: a report now would say the
			// node runs nothing, and its instances would flap.
			wait = s.o.Tick
		case !r.link.ready(now):
			wait = max(r.link.until(now), s.o.Tick)
		default:
			err := bounded(ctx, r.report)
			if r.link.result(s.o.Clock.Now(), err) {
				r.linkBack()
			}
			if err != nil {
				if !unreachable.Is(err) && ctx.Err() == nil {
					s.log("Reporting failed; retrying", "error", err.Error())
				}
				wait = s.o.Tick
				break
			}
			r.mu.Lock()
			if r.gen == gen {
				r.dirty = false
			} else {
				r.since = s.o.Clock.Now()
			}
			r.mu.Unlock()
			continue
		}
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-s.o.Clock.After(max(wait, time.Millisecond)):
		}
	}
}

// report applies the node's half of EdgeNode status when it differs from
// what was last reported: every container the runtime shows; for each
// instance without a container, its failure or the pull it waits on.
func (r *reporter) report(ctx context.Context) error {
	s := r.s
	r.mu.Lock()
	desired, serviceOfTask := r.desired, r.serviceOfTask
	r.mu.Unlock()
	seen, stats := s.cache.snapshot()
	states := s.workers.states()
	info := s.info.Load()
	ready := s.health.ready()
	containers := make([]edgev1alpha1.ObservedContainer, 0, len(seen)+len(states))
	has := map[string]bool{}
	for _, c := range seen {
		o := observedContainer(c, states[c.TaskID()].fail, stats, info.Arch)
		if !ready {
			// The engine does not answer: the last state seen is no
			// longer known to be true.
			o.State, o.CPU, o.Memory, o.Size = "", nil, nil, nil
		}
		containers = append(containers, o)
		has[c.TaskID()] = true
	}
	for task, st := range states {
		w, ok := desired[task]
		if !ok || has[task] {
			continue
		}
		o := edgev1alpha1.ObservedContainer{Name: w.inst.Name, TaskID: task, Image: string(w.svc.Spec.Image.Ref), ImageArch: info.Arch}
		// A pull under way is the news: a retry after a failed pull shows
		// its progress, not the failure it may yet mend.
		switch {
		case st.pull != nil:
			o.Revision, o.ImagePull = w.inst.Revision, imagePull(st.pull)
		case st.fail != nil:
			o.Revision, o.State, o.FailedMessage = st.fail.revision, edgev1alpha1.ContainerExited, st.fail.message
		default:
			continue
		}
		containers = append(containers, o)
	}
	sort.Slice(containers, func(i, j int) bool { return containers[i].Name < containers[j].Name })
	counts := Count(containers, serviceOfTask)
	containers, dropped := withinMaxItems(containers)
	if dropped != r.dropped {
		r.dropped = dropped
		if dropped > 0 {
			s.o.Log.Info("The node runs more containers than its status holds: those edgeplane does not manage are left out first; the counts count every one",
				"node", s.Name, "reported", len(containers), "left out", dropped)
		}
	}
	runtime := s.health.condition()
	address := s.address()
	if r.reportedCounts != nil && *r.reportedCounts == counts && reflect.DeepEqual(containers, r.reported) && reflect.DeepEqual(runtime, r.reportedRuntime) &&
		address == r.reportedAddress && info == r.reportedInfo {
		return nil
	}
	rep := report{
		info: edgev1alpha1.NodeInfo{Type: info.Type, Arch: info.Arch, Address: address, OSVersion: info.OSVersion, RuntimeVersion: info.RuntimeVersion,
			AgentVersion: s.o.AgentVersion, MaxInstances: int32(s.o.MaxInstances), ReadsAssignment: true},
		boot:    info.boot,
		runtime: runtime, containers: containers, counts: counts,
	}
	if err := r.apply(ctx, rep); err != nil {
		return err
	}
	s.o.Log.V(1).Info("Reported", "node", s.Name, "containers", len(containers))
	r.reported, r.reportedCounts, r.reportedRuntime, r.reportedAddress, r.reportedInfo = containers, &counts, runtime, address, info
	return nil
}

// maxReported is how many containers status.containers holds: the CRD's
// maxItems. A report of more would be refused, again and again.
const maxReported = 2048

// withinMaxItems keeps a report within maxReported entries, by name: the
// instances edgeplane manages first, then the engine's other containers.
// It says how many it left out.
func withinMaxItems(cs []edgev1alpha1.ObservedContainer) ([]edgev1alpha1.ObservedContainer, int) {
	if len(cs) <= maxReported {
		return cs, 0
	}
	out := make([]edgev1alpha1.ObservedContainer, 0, maxReported)
	for _, managed := range []bool{true, false} {
		for _, c := range cs {
			if (c.TaskID != "") == managed && len(out) < maxReported {
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, len(cs) - len(out)
}

// imagePull is the status of a pull an instance waits on.
func imagePull(pl *pull) *edgev1alpha1.ImagePull {
	pr, queued := pl.progress()
	out := &edgev1alpha1.ImagePull{Image: text.Cut(pl.image, 255), BytesDone: pr.Done, BytesTotal: pr.Total}
	if queued {
		out.Queued = true
	}
	return out
}

// observedContainer is the status entry of one container.
func observedContainer(c *Container, f *failure, stats map[string]Stats, arch string) edgev1alpha1.ObservedContainer {
	o := edgev1alpha1.ObservedContainer{
		Name: c.Name, ID: c.ID, State: c.State, Image: text.Cut(c.Image, 255), ImageID: text.Cut(c.ImageID, 255), ImageArch: arch,
		RestartCount: c.RestartCount, CreatedTime: timeOrNil(c.CreatedAt), StartedTime: timeOrNil(c.StartedAt),
	}
	if task := c.TaskID(); task != "" {
		o.TaskID, o.Revision, o.Image = task, c.Revision(), c.Labels[LabelImageRef]
		if f != nil && f.revision == o.Revision && f.id == c.ID {
			o.FailedMessage = f.message
		} else if c.State == edgev1alpha1.ContainerExited && (c.ExitCode != 0 || c.OOMKilled) {
			o.FailedMessage = text.Cut(exitMessage(c), maxMessage)
		}
	}
	if st, ok := stats[c.ID]; ok && c.State == edgev1alpha1.ContainerRunning {
		o.CPU, o.Memory, o.Size = st.CPU, st.Memory, st.Size
	}
	return o
}

func exitMessage(c *Container) string {
	msg := fmt.Sprintf("container exited with code %d", c.ExitCode)
	if c.OOMKilled {
		msg += ", killed for exceeding its memory limit"
	}
	if c.Error != "" {
		msg += ": " + c.Error
	}
	return msg
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t.Truncate(time.Second)}
}
