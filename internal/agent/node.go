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
	"reflect"
	"sort"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
	"github.com/edgeplane/edgeplane/internal/unreachable"
)

// node is the runtime-agnostic loop of one edge node: it follows the
// instances placed on the node, makes the runtime run them, renews the
// node's Lease and reports what the runtime shows.
type node struct {
	Node
	o    Options
	rt   Runtime
	c    client.Client
	view client.Reader
	// synced says the watch cache holds what the API server said; until
	// then the node runs from its state file.
	synced func() bool
	info   RuntimeInfo
	boot   *metav1.Time

	// link is the node's link to the API server, health its engine's;
	// registered says the EdgeNode is known to exist.
	link       *link
	health     *health
	registered bool
	// state is the node's state file (nil without --state-dir); fromFile
	// is what it held at start, the desired state until the cache syncs.
	state    *stateFile
	fromFile map[string]want
	disk     outage
	creds    credentials

	// known is what the runtime last showed, by runtime id; figures are
	// the last stats of running containers; started holds the ids the loop
	// has started, so that it starts a container once. Figures are taken
	// every MetricsInterval, not when a container starts.
	known    map[string]*Container
	figures  map[string]Stats
	started  map[string]bool
	failures map[string]*failure // by task id
	events   <-chan string
	// sampling delivers the figures of a sample under way; nil when none is.
	sampling        chan map[string]Stats
	wake            chan struct{}
	stopWatch       context.CancelFunc
	nextResync      time.Time
	reported        []edgev1alpha1.ObservedContainer
	reportedCounts  *Counts
	reportedRuntime *metav1.Condition
	// dirty says a change waits to be reported; dirtySince is when the
	// first of them was seen.
	dirty                  bool
	dirtySince             time.Time
	lease                  *coordinationv1.Lease
	nextRenew, nextMetrics time.Time
	silentFrom, silentTo   time.Time
	log                    func(msg string, kv ...any)
}

// failure is an instance's last failed create or start at one revision;
// the loop tries again after a back-off.
type failure struct {
	revision int64
	id       string // the container, when one was created
	message  string
	attempts int
	retryAt  time.Time
}

// want is an instance the node should run.
type want struct {
	svc  *edgev1alpha1.EdgeService
	inst edgev1alpha1.ServiceInstance
}

const (
	retryBase = 10 * time.Second
	retryMax  = 5 * time.Minute
	// maxMessage is the CRD's bound on failedMessage.
	maxMessage = 4096
)

func newNode(n Node, o Options, rt Runtime, c client.Client, view client.Reader, synced func() bool, start time.Time, i int) *node {
	s := &node{
		Node: n, o: o, rt: rt, c: c, view: view, synced: synced,
		// What the engine says replaces this once it answers.
		info: RuntimeInfo{Type: n.Type, Arch: n.Arch},
		wake: make(chan struct{}, 1), known: map[string]*Container{}, figures: map[string]Stats{}, started: map[string]bool{}, failures: map[string]*failure{},
		dirty: true,
		// Spread the metrics refreshes of many nodes over the interval.
		nextMetrics: start.Add(o.MetricsInterval * time.Duration(i%97) / 97),
		log:         func(msg string, kv ...any) { o.Log.Info(msg, append([]any{"node", n.Name}, kv...)...) },
	}
	s.link = newLink(uint64(i)+uint64(start.UnixNano()), s.log)
	s.health = newHealth(o.RuntimeProbeInterval, s.log)
	s.disk = outage{what: "State file writes", log: s.log}
	s.creds = credentials{c: c, key: types.NamespacedName{Namespace: o.LeaseNamespace, Name: n.Name}}
	if o.StateDir != "" {
		s.state = newStateFile(o.StateDir, n.Name)
	}
	for _, sl := range o.Silences {
		if sl.Node == n.Name {
			s.silentFrom, s.silentTo = start.Add(sl.After), start.Add(sl.After+sl.For)
		}
	}
	return s
}

func (s *node) run(ctx context.Context) {
	if s.state != nil {
		services, err := s.state.load(s.o.Clock.Now())
		if err != nil {
			s.log("Starting without the state file", "error", err.Error())
		}
		s.fromFile = wantsOf(services)
		if len(services) > 0 {
			s.log("Loaded the node's last desired state", "file", s.state.path, "instances", len(s.fromFile))
		}
	}
	for ctx.Err() == nil {
		s.step(ctx)
		// Act at once on a change of the node's services or of its
		// runtime's containers; the tick paces everything else.
		select {
		case <-ctx.Done():
		case <-s.o.Clock.After(s.o.Tick):
		case <-s.wake:
		case id, ok := <-s.events:
			s.onEvent(ctx, id, ok)
		case figures := <-s.sampling:
			s.merge(figures)
		}
	}
	if s.stopWatch != nil {
		s.stopWatch()
	}
}

// register creates the EdgeNode unless it exists.
func (s *node) register(ctx context.Context) error {
	n := &edgev1alpha1.EdgeNode{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Spec:       edgev1alpha1.EdgeNodeSpec{Address: s.Address, Type: s.Type, Arch: s.Arch},
	}
	err := s.c.Create(ctx, n)
	if apierrors.IsForbidden(err) {
		// An agent limited to its own node may not create it: the node
		// must have been created for it.
		err = s.c.Get(ctx, client.ObjectKeyFromObject(n), n)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// step registers the node and renews its Lease when the link allows,
// probes the engine when due, brings the engine's containers in line with
// the instances placed on the node while it answers, and reports when
// something changed.
func (s *node) step(ctx context.Context) {
	now := s.o.Clock.Now()
	if !now.Before(s.silentFrom) && now.Before(s.silentTo) {
		return // silent: neither Lease nor report
	}
	s.cloud(ctx, now)
	if s.health.probe(ctx, s.rt, now) {
		s.runtimeChanged(ctx, now)
	}
	desired, authoritative, err := s.desired(ctx)
	if err != nil {
		s.log("Reading the node's services failed", "error", err.Error())
		return
	}
	if authoritative {
		s.remember(desired, now)
	}
	if s.health.ready() {
		if err := s.sync(ctx, now); err != nil {
			s.health.suspect(now)
			s.o.Log.V(1).Info("Listing the runtime's containers failed", "node", s.Name, "error", err.Error())
		} else {
			s.converge(ctx, desired, authoritative, now)
			if s.sampling == nil && sampleDue(s.dirty, now, s.nextMetrics, s.o.MetricsInterval) {
				s.sample(ctx)
				s.nextMetrics = now.Add(s.o.MetricsInterval)
			}
		}
	}
	if reportDue(s.dirty, s.dirtySince, now, s.o.MinReportInterval) && s.registered && s.link.ready(now) {
		err := bounded(ctx, func(ctx context.Context) error { return s.report(ctx, desired) })
		s.link.result(s.o.Clock.Now(), err)
		if err != nil {
			if !unreachable.Is(err) {
				s.log("Reporting failed; retrying", "error", err.Error())
			}
			return
		}
		s.dirty = false
	}
}

// cloud registers the node and renews its Lease, when the link allows a
// call. When the link comes back, the changes held meanwhile are reported
// at once, in one apply.
func (s *node) cloud(ctx context.Context, now time.Time) {
	call := func(what string, err error) bool {
		// Timed at the call's end: one that waited out its bound must not
		// count that wait as back-off already served.
		end := s.o.Clock.Now()
		if s.link.result(end, err) && s.dirty {
			s.dirtySince = end.Add(-s.o.MinReportInterval)
		}
		if err != nil && !unreachable.Is(err) {
			s.log(what+" failed", "error", err.Error())
		}
		return err == nil
	}
	if !s.registered && s.link.ready(now) {
		s.registered = call("Registering the node", bounded(ctx, s.register))
	}
	now = s.o.Clock.Now()
	if !now.Before(s.nextRenew) && s.link.ready(now) &&
		call("Renewing the Lease", bounded(ctx, func(ctx context.Context) error { return s.renewLease(ctx, now) })) {
		s.nextRenew = now.Add(s.o.RenewInterval)
	}
}

// apiTimeout bounds each call the loop makes to the API server: on a link
// that drops packets (or an API server that stopped) a call would wait on
// a dead connection for minutes, and the loop with it.
const apiTimeout = 10 * time.Second

func bounded(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return call(ctx)
}

// runtimeChanged acts on the engine going down or coming back: while it is
// down nothing is asked of it and its containers' state is unknown; when
// it answers again, the node reads its info and lists every container
// afresh (containers it lost are then created again).
func (s *node) runtimeChanged(ctx context.Context, now time.Time) {
	s.changed()
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.events, s.nextResync = nil, now
	if !s.health.ready() {
		clear(s.figures)
		return
	}
	info, err := s.rt.Info(ctx)
	if err != nil {
		s.health.suspect(now)
		return
	}
	s.info = info
	if !info.BootTime.IsZero() {
		s.boot = ptr.To(metav1.NewTime(info.BootTime.Truncate(time.Second)))
	}
}

// remember keeps the desired state the API server gave in the state file.
func (s *node) remember(desired map[string]want, now time.Time) {
	s.fromFile = nil
	if s.state == nil {
		return
	}
	if err := s.state.save(desired, now); err != nil {
		s.disk.fail(now, err)
	} else {
		s.disk.ok(now)
	}
}

// reportDue says whether a node reports its changes now: it holds them
// for window from the first of them, so that a burst (a container
// created, then running a moment later; figures sampled meanwhile) goes
// out in one apply, and two reports are at least window apart.
func reportDue(dirty bool, since, now time.Time, window time.Duration) bool {
	return dirty && !now.Before(since.Add(window))
}

// sampleDue says whether a node samples its containers' figures now: when
// they are due, or when changes wait to be reported and the figures are
// due within half an interval, so that they ride along in that report
// instead of costing one of their own soon after.
func sampleDue(dirty bool, now, next time.Time, interval time.Duration) bool {
	return !now.Before(next) || (dirty && !now.Before(next.Add(-interval/2)))
}

// changed notes a change to report.
func (s *node) changed() {
	if !s.dirty {
		s.dirty, s.dirtySince = true, s.o.Clock.Now()
	}
}

// renewLease updates the node's Lease, reading it only when the one kept
// from the last renewal is missing or stale: one write per renewal.
func (s *node) renewLease(ctx context.Context, now time.Time) error {
	renew := metav1.NewMicroTime(now)
	if s.lease != nil {
		s.lease.Spec.RenewTime = &renew
		err := s.c.Update(ctx, s.lease)
		if err == nil {
			return nil
		}
		s.lease = nil
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.o.LeaseNamespace}}
	err := s.c.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	switch {
	case apierrors.IsNotFound(err):
		lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To(s.Name), LeaseDurationSeconds: ptr.To(int32(s.o.LeaseDuration / time.Second)), RenewTime: &renew}
		err = s.c.Create(ctx, lease)
	case err == nil:
		lease.Spec.RenewTime = &renew
		err = s.c.Update(ctx, lease)
	}
	if err == nil {
		s.lease = lease
	}
	return err
}

// sync keeps known current: a full list when the event stream starts (or
// broke) and every ResyncInterval, and one inspect per container the
// stream names in between.
func (s *node) sync(ctx context.Context, now time.Time) error {
	if s.events == nil || !now.Before(s.nextResync) {
		if s.events == nil {
			// Subscribe before listing, so no change falls between the two.
			wctx, cancel := context.WithCancel(ctx)
			s.events, s.stopWatch = s.rt.Events(wctx), cancel
		}
		if err := s.resync(ctx); err != nil {
			return err
		}
		s.nextResync = now.Add(s.o.ResyncInterval)
	}
	for s.events != nil {
		select {
		case id, ok := <-s.events:
			s.onEvent(ctx, id, ok)
		default:
			return nil
		}
	}
	return nil
}

// onEvent inspects the container an event names; a closed stream is
// subscribed to again, with a full list, a second later.
func (s *node) onEvent(ctx context.Context, id string, ok bool) {
	if !ok {
		s.stopWatch()
		s.events, s.nextResync = nil, s.o.Clock.Now().Add(time.Second)
		return
	}
	s.refresh(ctx, id)
}

// poke wakes the loop; a wake already pending is enough.
func (s *node) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// resync lists the runtime's containers and inspects each of this node's.
func (s *node) resync(ctx context.Context) error {
	list, err := s.rt.List(ctx)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(list))
	for i := range list {
		if s.foreign(&list[i]) {
			continue
		}
		seen[list[i].ID] = true
		s.refresh(ctx, list[i].ID)
	}
	for id := range s.known {
		if !seen[id] {
			s.forget(id)
		}
	}
	return nil
}

// foreign is a container another node's agent created on a shared engine:
// neither reported nor touched here.
func (s *node) foreign(c *Container) bool {
	n, ok := c.Labels[LabelNode]
	return ok && n != s.Name
}

// refresh inspects one container into known; it returns nil when the
// container is gone or belongs to another node.
func (s *node) refresh(ctx context.Context, id string) *Container {
	c, err := s.rt.Inspect(ctx, id)
	if errors.Is(err, ErrNotFound) {
		s.forget(id)
		return nil
	}
	if err != nil {
		s.health.suspect(s.o.Clock.Now())
		s.o.Log.V(1).Info("Inspecting a container failed", "node", s.Name, "container", id, "error", err.Error())
		return s.known[id]
	}
	if s.foreign(&c) {
		return nil
	}
	if old := s.known[c.ID]; old == nil || !reflect.DeepEqual(*old, c) {
		s.known[c.ID] = &c
		s.changed()
	}
	return s.known[c.ID]
}

func (s *node) forget(id string) {
	if _, ok := s.known[id]; ok {
		delete(s.known, id)
		delete(s.figures, id)
		delete(s.started, id)
		s.changed()
	}
}

// desired lists the instances placed on the node, by task id, and says
// whether the API server said so: until the watch cache has synced they
// come from the state file, which may be out of date. Instances of a
// service being deleted are not wanted: their containers go, so that the
// service's finalizer can.
func (s *node) desired(ctx context.Context) (map[string]want, bool, error) {
	if !s.synced() {
		return s.fromFile, false, nil
	}
	list := &edgev1alpha1.EdgeServiceList{}
	if err := s.view.List(ctx, list, client.MatchingFields{index.ServiceByNode: s.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, err
	}
	out := map[string]want{}
	for i := range list.Items {
		svc := &list.Items[i]
		if svc.DeletionTimestamp != nil {
			continue
		}
		for _, inst := range svc.Status.Containers {
			if inst.NodeName == s.Name {
				out[inst.TaskID] = want{svc: svc, inst: inst}
			}
		}
	}
	return out, true, nil
}

// converge removes the containers of instances that left or moved to
// another revision, creates the missing ones and starts them once. When
// desired is not authoritative (the state file, before the API server has
// answered) nothing is removed or replaced: a container goes only when
// the API server says its instance did.
func (s *node) converge(ctx context.Context, desired map[string]want, authoritative bool, now time.Time) {
	byTask := map[string][]*Container{}
	for _, c := range s.known {
		if t := c.TaskID(); t != "" {
			byTask[t] = append(byTask[t], c)
		}
	}
	for task, cs := range byTask {
		if _, ok := desired[task]; !ok && authoritative {
			for _, c := range cs {
				s.remove(ctx, c)
			}
		}
	}
	for task := range s.failures {
		if _, ok := desired[task]; !ok {
			delete(s.failures, task)
			s.changed()
		}
	}
	for task, w := range desired {
		var keep *Container
		for _, c := range byTask[task] {
			if keep == nil && c.Revision() == w.inst.Revision {
				keep = c
				continue
			}
			if authoritative {
				s.remove(ctx, c) // another revision, or a duplicate
			}
		}
		if keep == nil && !authoritative && len(byTask[task]) > 0 {
			continue // kept as it is until the API server answers
		}
		f := s.failures[task]
		if f != nil && f.revision != w.inst.Revision {
			delete(s.failures, task)
			f = nil
			s.changed()
		}
		if f != nil && now.Before(f.retryAt) {
			continue
		}
		if keep == nil {
			spec := s.spec(w)
			creds, ready, err := s.creds.of(ctx, w.svc)
			if !ready {
				s.o.Log.V(1).Info("Waiting for the node's registry credentials", "node", s.Name, "service", w.svc.Name, "error", err)
				continue
			}
			spec.PullCredentials = creds
			id, err := s.rt.Create(ctx, spec)
			if err != nil {
				s.fail(ctx, task, w.inst.Revision, "", err, now)
				continue
			}
			s.log("Created container", "container", w.inst.Name, "id", id, "revision", w.inst.Revision)
			if w.svc.Spec.Action == edgev1alpha1.ActionLoad {
				delete(s.failures, task) // loaded is all it asks
			}
			if keep = s.refresh(ctx, id); keep == nil {
				continue
			}
		}
		if w.svc.Spec.Action == edgev1alpha1.ActionLoad || s.started[keep.ID] || !keep.StartedAt.IsZero() ||
			(keep.State != edgev1alpha1.ContainerCreated && keep.State != edgev1alpha1.ContainerExited) {
			continue
		}
		if err := s.rt.Start(ctx, keep.ID); err != nil {
			s.fail(ctx, task, w.inst.Revision, keep.ID, err, now)
		} else {
			s.log("Started container", "container", keep.Name, "id", keep.ID)
			s.started[keep.ID] = true
			delete(s.failures, task)
		}
		s.refresh(ctx, keep.ID)
		s.changed()
	}
}

// spec is what the runtime is asked to create for an instance.
func (s *node) spec(w want) ContainerSpec {
	return ContainerSpec{
		Name: w.inst.Name,
		Labels: map[string]string{
			LabelNode: s.Name, LabelTaskID: w.inst.TaskID, LabelRevision: strconv.FormatInt(w.inst.Revision, 10),
			LabelService: w.svc.Namespace + "/" + w.svc.Name, LabelImageRef: string(w.svc.Spec.Image.Ref),
		},
		Service: w.svc,
	}
}

// fail records a failed create or start, to be reported and tried again
// after a back-off that doubles up to retryMax. A call that failed because
// the engine stopped answering is no failure of the instance: the probe
// takes over.
func (s *node) fail(ctx context.Context, task string, rev int64, id string, err error, now time.Time) {
	if s.rt.Ping(ctx) != nil {
		s.health.suspect(now)
		return
	}
	f := s.failures[task]
	if f == nil || f.revision != rev {
		f = &failure{revision: rev}
		s.failures[task] = f
	}
	f.id, f.message = id, truncate(err.Error(), maxMessage)
	f.retryAt = now.Add(min(retryMax, retryBase<<min(f.attempts, 10)))
	f.attempts++
	s.changed()
	s.log("Running an instance failed; will try again", "task", task, "revision", rev, "error", f.message, "retryAt", f.retryAt)
}

// remove stops and removes one of edgeplane's containers.
func (s *node) remove(ctx context.Context, c *Container) {
	if c.State == edgev1alpha1.ContainerRunning || c.State == edgev1alpha1.ContainerPaused {
		if err := s.rt.Stop(ctx, c.ID, s.o.StopTimeout); err != nil && !errors.Is(err, ErrNotFound) {
			s.log("Stopping a container failed", "container", c.Name, "error", err.Error())
		}
	}
	if err := s.rt.Remove(ctx, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
		s.log("Removing a container failed", "container", c.Name, "error", err.Error())
		return
	}
	s.log("Removed container", "container", c.Name, "id", c.ID, "revision", c.Revision())
	s.forget(c.ID)
}

// sample takes the figures of edgeplane's running containers, concurrently
// and off the loop: an engine may take a while to answer (Docker Engine's
// stats wait for its collector's next one-second tick), and state changes
// must not wait for figures. merge takes the result in.
func (s *node) sample(ctx context.Context) {
	var ids []string
	for id, c := range s.known {
		if c.State == edgev1alpha1.ContainerRunning && c.TaskID() != "" {
			ids = append(ids, id)
		}
	}
	out := make(chan map[string]Stats, 1)
	s.sampling = out
	go func() {
		figures := make(map[string]Stats, len(ids))
		var mu sync.Mutex
		var wg sync.WaitGroup
		slots := make(chan struct{}, maxSampling)
		for _, id := range ids {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				st, err := s.rt.Stats(ctx, id)
				if err != nil {
					s.o.Log.V(1).Info("Sampling a container failed", "node", s.Name, "container", id, "error", err.Error())
					return
				}
				mu.Lock()
				figures[id] = st
				mu.Unlock()
			})
		}
		wg.Wait()
		out <- figures
	}()
}

// maxSampling bounds the stats calls of one node at once.
const maxSampling = 8

// merge keeps the figures of containers that still run, and drops those
// of containers that no longer do.
func (s *node) merge(figures map[string]Stats) {
	s.sampling = nil
	for id := range s.figures {
		if c := s.known[id]; c == nil || c.State != edgev1alpha1.ContainerRunning {
			delete(s.figures, id)
		}
	}
	for id, st := range figures {
		if c := s.known[id]; c != nil && c.State == edgev1alpha1.ContainerRunning {
			s.figures[id] = st
		}
	}
	s.changed()
}

// report applies the node's half of EdgeNode status when it differs from
// what was last reported: every container the runtime shows, and a
// container-less entry for each instance whose container could not be created.
func (s *node) report(ctx context.Context, desired map[string]want) error {
	containers := make([]edgev1alpha1.ObservedContainer, 0, len(s.known)+len(s.failures))
	has := map[string]bool{}
	for _, c := range s.known {
		o := s.observe(c)
		if !s.health.ready() {
			// The engine does not answer: the last state seen is no
			// longer known to be true.
			o.State, o.CPU, o.Memory, o.Size = "", nil, nil, nil
		}
		containers = append(containers, o)
		has[c.TaskID()] = true
	}
	for task, f := range s.failures {
		if w, ok := desired[task]; ok && !has[task] {
			containers = append(containers, edgev1alpha1.ObservedContainer{
				Name: w.inst.Name, TaskID: task, Revision: f.revision, State: edgev1alpha1.ContainerExited,
				FailedMessage: f.message, Image: string(w.svc.Spec.Image.Ref), ImageArch: s.info.Arch,
			})
		}
	}
	sort.Slice(containers, func(i, j int) bool { return containers[i].Name < containers[j].Name })
	serviceOfTask := make(map[string]string, len(desired))
	for task, w := range desired {
		serviceOfTask[task] = w.svc.Namespace + "/" + w.svc.Name
	}
	counts := Count(containers, serviceOfTask)
	runtime := s.health.condition()
	if s.reportedCounts != nil && *s.reportedCounts == counts && reflect.DeepEqual(containers, s.reported) && reflect.DeepEqual(runtime, s.reportedRuntime) {
		return nil
	}
	info := edgev1alpha1.NodeInfo{Type: s.info.Type, Arch: s.info.Arch, OSVersion: s.info.OSVersion, RuntimeVersion: s.info.RuntimeVersion, AgentVersion: s.o.AgentVersion}
	if err := ApplyStatus(ctx, s.c, s.Name, info, s.boot, runtime, containers, counts); err != nil {
		return err
	}
	s.o.Log.V(1).Info("Reported", "node", s.Name, "containers", len(containers))
	s.reported, s.reportedCounts, s.reportedRuntime = containers, &counts, runtime
	return nil
}

// observe is the status entry of one container.
func (s *node) observe(c *Container) edgev1alpha1.ObservedContainer {
	o := edgev1alpha1.ObservedContainer{
		Name: c.Name, ID: c.ID, State: c.State, Image: truncate(c.Image, 255), ImageID: truncate(c.ImageID, 255), ImageArch: s.info.Arch,
		RestartCount: c.RestartCount, CreatedTime: timeOrNil(c.CreatedAt), StartedTime: timeOrNil(c.StartedAt),
	}
	if task := c.TaskID(); task != "" {
		o.TaskID, o.Revision, o.Image = task, c.Revision(), c.Labels[LabelImageRef]
		if f := s.failures[task]; f != nil && f.revision == o.Revision && f.id == c.ID {
			o.FailedMessage = f.message
		} else if c.State == edgev1alpha1.ContainerExited && (c.ExitCode != 0 || c.OOMKilled) {
			o.FailedMessage = truncate(exitMessage(c), maxMessage)
		}
	}
	if st, ok := s.figures[c.ID]; ok && c.State == edgev1alpha1.ContainerRunning {
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
	return ptr.To(metav1.NewTime(t.Truncate(time.Second)))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
