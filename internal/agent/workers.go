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
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/text"
)

// workers gives each instance on the node a worker of its own, as the
// kubelet's pod workers do: create, pull, start, stop and remove of one
// instance run on its worker's goroutine, so that a slow or hung engine
// call for one instance delays no other, no report and no renewal. One
// worker per task id, and the containers' deterministic names, keep one
// container per instance.
type workers struct {
	s      *node
	mu     sync.Mutex
	byTask map[string]*worker
	wg     sync.WaitGroup
}

func newWorkers(s *node) *workers { return &workers{s: s, byTask: map[string]*worker{}} }

// worker converges one instance.
type worker struct {
	task   string
	s      *node
	signal chan struct{}

	mu   sync.Mutex
	want *want
	// authoritative says the want came from the API server: until then
	// nothing is removed or replaced.
	authoritative bool
	// cancel ends the sync under way: the instance changed under it.
	cancel context.CancelFunc
	// pending says the worker was woken and has not begun its sync yet:
	// the node has not settled (a new instance's report would otherwise
	// go out before its container is created).
	pending bool
	fail    *failure
	// pulling is the pull the instance waits on, since pullingSince.
	pulling      *pull
	pullingSince time.Time
	// started holds the containers this worker started, so that it starts
	// a container once: one a user stopped stays stopped.
	started map[string]bool
}

// failure is an instance's last failed pull, create or start at one
// revision; the worker tries again after a back-off.
type failure struct {
	revision int64
	id       string // the container, when one was created
	message  string
	retryAt  time.Time
}

// dispatch hands each instance its latest want: those placed on the node,
// and those that left it but still have containers or a worker. all wakes
// every worker, whether its want changed or not: the engine came back.
func (ws *workers) dispatch(ctx context.Context, desired map[string]want, authoritative, all bool) {
	withContainers := ws.s.cache.tasks()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if all {
		for _, w := range ws.byTask {
			w.poke()
		}
	}
	for task, w := range desired {
		ws.get(ctx, task).update(&w, authoritative)
	}
	for task, wk := range ws.byTask {
		if _, ok := desired[task]; !ok {
			wk.update(nil, authoritative)
		}
	}
	for task := range withContainers {
		if _, ok := desired[task]; !ok && ws.byTask[task] == nil {
			ws.get(ctx, task).update(nil, authoritative)
		}
	}
}

// get returns the worker of a task, starting one; ws.mu is held.
func (ws *workers) get(ctx context.Context, task string) *worker {
	w := ws.byTask[task]
	if w == nil {
		w = &worker{task: task, s: ws.s, signal: make(chan struct{}, 1), started: map[string]bool{}}
		ws.byTask[task] = w
		ws.wg.Add(1)
		go func() {
			defer ws.wg.Done()
			w.run(ctx)
		}()
	}
	return w
}

// poke wakes the worker of a task whose containers changed.
func (ws *workers) poke(task string) {
	ws.mu.Lock()
	w := ws.byTask[task]
	ws.mu.Unlock()
	if w != nil {
		w.poke()
	}
}

// wait waits for every worker to stop.
func (ws *workers) wait() { ws.wg.Wait() }

// instanceState is what the reporter shows of an instance beside its
// containers: its failure, or the pull it waits on.
type instanceState struct {
	fail *failure
	pull *pull
}

// states returns the state of every instance that has one.
func (ws *workers) states() map[string]instanceState {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := map[string]instanceState{}
	for task, w := range ws.byTask {
		w.mu.Lock()
		if w.fail != nil || w.pulling != nil {
			st := instanceState{pull: w.pulling}
			if w.fail != nil {
				f := *w.fail
				st.fail = &f
			}
			out[task] = st
		}
		w.mu.Unlock()
	}
	return out
}

// update gives the worker its instance's latest want, waking it when the
// want changed; a sync under way for another revision is cut short.
func (w *worker) update(next *want, authoritative bool) {
	w.mu.Lock()
	changed := w.want.key() != next.key() || w.authoritative != authoritative
	if changed && w.cancel != nil && (next == nil || w.want == nil || next.inst.Revision != w.want.inst.Revision) {
		w.cancel()
	}
	w.want, w.authoritative = next, authoritative
	w.mu.Unlock()
	if changed {
		w.poke()
	}
}

func (w *worker) poke() {
	w.mu.Lock()
	w.pending = true
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// run syncs the instance whenever it is woken or a retry is due, and
// stops once nothing is left to do: no want, no container, no failure.
func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		retry := w.sync(ctx)
		if w.finished() {
			return
		}
		var due <-chan time.Time
		if retry > 0 {
			due = w.s.o.Clock.After(retry)
		}
		select {
		case <-ctx.Done():
		case <-w.signal:
		case <-due:
		}
	}
}

// finished removes the worker when its instance needs nothing more.
func (w *worker) finished() bool {
	ws := w.s.workers
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w.mu.Lock()
	idle := w.want == nil && w.fail == nil
	w.mu.Unlock()
	if !idle || len(w.s.cache.ofTask(w.task)) > 0 {
		return false
	}
	delete(ws.byTask, w.task)
	return true
}

// sync brings the instance's containers in line with its want: it removes
// those of another revision (or duplicates), creates the missing one and
// starts it once. Without an authoritative want nothing is removed or
// replaced: a container goes only when the API server says its instance
// did. It returns when to try again, 0 for "when woken".
func (w *worker) sync(parent context.Context) time.Duration {
	s := w.s
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	w.mu.Lock()
	want, authoritative := w.want, w.authoritative
	w.cancel, w.pending = cancel, false
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.cancel = nil
		w.mu.Unlock()
		s.reporter.poke() // the node may have settled: its changes go out now
	}()
	if !s.health.ready() || !s.cache.listed.Load() {
		return 0 // nothing is asked of an engine that does not answer; woken when it does
	}
	now := s.o.Clock.Now()
	cs := s.cache.ofTask(w.task)
	if want == nil {
		if authoritative {
			w.removeAll(ctx, cs)
		}
		w.setFailure(nil)
		return 0
	}
	rev := want.inst.Revision
	var keep *Container
	var stale []*Container
	for _, c := range cs {
		if keep == nil && c.Revision() == rev {
			keep = c
		} else {
			stale = append(stale, c)
		}
	}
	if authoritative {
		w.removeAll(ctx, stale) // another revision, or a duplicate
	} else if keep == nil && len(cs) > 0 {
		return 0 // kept as it is until the API server answers
	}
	w.mu.Lock()
	f := w.fail
	if f != nil && f.revision != rev {
		w.fail, f = nil, nil
	}
	w.mu.Unlock()
	if f != nil && now.Before(f.retryAt) {
		return f.retryAt.Sub(now)
	}
	if keep == nil {
		id, wait, err := w.create(ctx, want)
		switch {
		case ctx.Err() != nil:
			return 0 // the want changed meanwhile: look again
		case err != nil:
			return w.failed(ctx, rev, "", err)
		case id == "":
			return wait
		}
		s.log("Created container", "container", want.inst.Name, "id", id, "revision", rev)
		// A new container was never started, whatever an engine that
		// reuses ids (the embedded OS's names, the simulator's) calls it.
		w.mu.Lock()
		delete(w.started, id)
		w.mu.Unlock()
		if want.svc.Spec.Action == edgev1alpha1.ActionLoad {
			w.setFailure(nil) // loaded is all it asks
		}
		if keep = s.cache.refresh(ctx, id); keep == nil {
			return time.Second
		}
	}
	w.mu.Lock()
	started := w.started[keep.ID]
	w.mu.Unlock()
	if want.svc.Spec.Action == edgev1alpha1.ActionLoad || started || !keep.StartedAt.IsZero() ||
		(keep.State != edgev1alpha1.ContainerCreated && keep.State != edgev1alpha1.ContainerExited) {
		return 0
	}
	if err := within(ctx, engineTimeout, func(ctx context.Context) error { return s.rt.Start(ctx, keep.ID) }); err != nil {
		s.cache.refresh(ctx, keep.ID)
		return w.failed(ctx, rev, keep.ID, err)
	}
	s.log("Started container", "container", keep.Name, "id", keep.ID)
	w.mu.Lock()
	w.started[keep.ID] = true
	w.mu.Unlock()
	w.setFailure(nil)
	s.cache.refresh(ctx, keep.ID)
	return 0
}

// create makes the instance's image present, through the puller, and
// creates its container. With no id and no error, wait says when to look
// again: its registry credentials have not reached the node yet.
func (w *worker) create(ctx context.Context, want *want) (id string, wait time.Duration, err error) {
	s := w.s
	spec := s.spec(want)
	creds, ready, err := s.creds.of(ctx, want.svc)
	if !ready {
		s.o.Log.V(1).Info("Waiting for the node's registry credentials", "node", s.Name, "service", want.svc.Name, "error", err)
		return "", time.Second, nil
	}
	image, err := s.rt.ImageOf(spec)
	if err != nil {
		return "", 0, err
	}
	err = s.puller.ensure(ctx, image, want.svc.Spec.Image.EffectivePullPolicy(), creds, func(pl *pull) {
		w.mu.Lock()
		w.pulling, w.pullingSince = pl, s.o.Clock.Now()
		w.mu.Unlock()
		s.reporter.changed()
	})
	w.mu.Lock()
	pulled := w.pulling != nil
	w.pulling = nil
	w.mu.Unlock()
	if pulled {
		s.reporter.changed()
	}
	if err != nil {
		return "", 0, err
	}
	err = within(ctx, engineTimeout, func(ctx context.Context) (err error) { id, err = s.rt.Create(ctx, spec); return err })
	return id, 0, err
}

// failed records a failed pull, create or start, to be reported with the
// time of the next attempt and tried again after a back-off that doubles
// from retryBase up to retryMax, as the kubelet's ImagePullBackOff does. A
// call that failed because the engine stopped answering is no failure of
// the instance: the prober takes over.
func (w *worker) failed(ctx context.Context, rev int64, id string, err error) time.Duration {
	s := w.s
	if within(ctx, probeTimeout, s.rt.Ping) != nil {
		s.health.suspect()
		return time.Second
	}
	now := s.o.Clock.Now()
	w.mu.Lock()
	if w.fail == nil || w.fail.revision != rev {
		s.retries.Reset(w.task) // a new revision starts its back-off anew
	}
	s.retries.Next(w.task, now)
	delay := s.retries.Get(w.task)
	f := &failure{revision: rev, id: id, retryAt: now.Add(delay)}
	f.message = failureMessage(err, delay, f.retryAt)
	w.fail = f
	w.mu.Unlock()
	s.reporter.changed()
	s.log("Running an instance failed; will try again", "task", w.task, "revision", rev, "error", err.Error(), "retryAt", f.retryAt)
	return delay
}

// newRetries is a node's back-off of failed instances, by task: from
// retryBase, doubled per failure up to retryMax; an instance that has not
// failed for twice retryMax starts again from retryBase.
func newRetries(clk clock.Clock) *flowcontrol.Backoff {
	b := flowcontrol.NewBackOff(retryBase, retryMax)
	b.Clock = clk
	return b
}

// failureMessage is what users read of a failure: the error, then when it
// is tried again.
func failureMessage(err error, delay time.Duration, at time.Time) string {
	suffix := fmt.Sprintf("; back-off %s, next attempt at %s", delay, at.UTC().Format(time.RFC3339))
	return text.Cut(err.Error(), maxMessage-len(suffix)) + suffix
}

func (w *worker) setFailure(f *failure) {
	w.mu.Lock()
	had := w.fail != nil
	w.fail = f
	w.mu.Unlock()
	if f == nil {
		w.s.retries.Reset(w.task)
	}
	if had || f != nil {
		w.s.reporter.changed()
	}
}

// removeAll stops and removes containers of the instance.
func (w *worker) removeAll(ctx context.Context, cs []*Container) {
	for _, c := range cs {
		w.remove(ctx, c)
	}
}

// remove stops and removes one of edgeplane's containers, the stop
// bounded by the stop timeout.
func (w *worker) remove(ctx context.Context, c *Container) {
	s := w.s
	if c.State == edgev1alpha1.ContainerRunning || c.State == edgev1alpha1.ContainerPaused {
		err := within(ctx, s.o.StopTimeout+engineTimeout, func(ctx context.Context) error { return s.rt.Stop(ctx, c.ID, s.o.StopTimeout) })
		if err != nil && !errors.Is(err, ErrNotFound) {
			s.log("Stopping a container failed", "container", c.Name, "error", err.Error())
		}
	}
	err := within(ctx, engineTimeout, func(ctx context.Context) error { return s.rt.Remove(ctx, c.ID) })
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.log("Removing a container failed", "container", c.Name, "error", err.Error())
		return
	}
	s.log("Removed container", "container", c.Name, "id", c.ID, "revision", c.Revision())
	w.mu.Lock()
	delete(w.started, c.ID)
	w.mu.Unlock()
	s.cache.remove(c.ID)
}

// spec is what the runtime is asked to create for an instance.
func (s *node) spec(w *want) ContainerSpec {
	return ContainerSpec{
		Name: w.inst.Name,
		Labels: map[string]string{
			LabelNode: s.Name, LabelTaskID: w.inst.TaskID, LabelRevision: strconv.FormatInt(w.inst.Revision, 10),
			LabelService: w.svc.Namespace + "/" + w.svc.Name, LabelImageRef: string(w.svc.Spec.Image.Ref),
		},
		Spec: &w.svc.Spec,
	}
}

// settled says whether every instance is where its step led it at now:
// no worker is woken and yet to sync, no sync is under way but one
// waiting on a pull for window or longer (a state of its own then,
// reported as it goes; a shorter one goes out with the running container
// it leads to), and no container the node started is still only created
// (an engine that starts it in the background, as the simulator does). A
// report then shows where the instances arrived, not a step on the way.
func (ws *workers) settled(now time.Time, window time.Duration) bool {
	starting := map[string]map[string]bool{}
	ws.mu.Lock()
	for task, w := range ws.byTask {
		w.mu.Lock()
		syncing, longPull := w.cancel != nil, w.pulling != nil && !now.Before(w.pullingSince.Add(window))
		busy := syncing && !longPull || !syncing && w.pending
		if len(w.started) > 0 {
			starting[task] = maps.Clone(w.started)
		}
		w.mu.Unlock()
		if busy {
			ws.mu.Unlock()
			return false
		}
	}
	ws.mu.Unlock()
	for task, started := range starting {
		for _, c := range ws.s.cache.ofTask(task) {
			if started[c.ID] && c.State == edgev1alpha1.ContainerCreated && c.StartedAt.IsZero() {
				return false
			}
		}
	}
	return true
}

// pulling says whether an instance waits on a pull.
func (ws *workers) pulling() bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.byTask {
		w.mu.Lock()
		p := w.pulling != nil
		w.mu.Unlock()
		if p {
			return true
		}
	}
	return false
}
