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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
)

// simNode is one simulated node: its runtime's containers by task id and
// what it last reported.
type simNode struct {
	Node
	o                      Options
	c                      client.Client
	view                   client.Reader
	rnd                    *rand.Rand
	boot                   metav1.Time
	containers             map[string]*edgev1alpha1.ObservedContainer
	system                 []edgev1alpha1.ObservedContainer
	readyAt                map[string]time.Time
	reported               []edgev1alpha1.ObservedContainer
	lease                  *coordinationv1.Lease
	dirty                  bool
	nextRenew, nextMetrics time.Time
	silentFrom, silentTo   time.Time
	log                    func(msg string, kv ...any)
}

func newSimNode(n Node, o Options, c client.Client, view client.Reader, start time.Time, i int) *simNode {
	s := &simNode{
		Node: n, o: o, c: c, view: view,
		rnd:        rand.New(rand.NewPCG(uint64(i), 42)),
		boot:       metav1.NewTime(start.Add(-time.Duration(i%50+1) * time.Hour).Truncate(time.Second)),
		containers: map[string]*edgev1alpha1.ObservedContainer{},
		readyAt:    map[string]time.Time{},
		dirty:      true,
		// Spread the metrics refreshes of many nodes over the interval.
		nextMetrics: start.Add(o.MetricsInterval * time.Duration(i%97) / 97),
		log:         func(msg string, kv ...any) { o.Log.Info(msg, append([]any{"node", n.Name}, kv...)...) },
	}
	for j := range o.SystemContainers {
		s.system = append(s.system, edgev1alpha1.ObservedContainer{
			Name: fmt.Sprintf("system-%d", j), ID: s.runtimeID(fmt.Sprintf("system-%d", j)), State: edgev1alpha1.ContainerRunning,
			CreatedTime: &s.boot, StartedTime: &s.boot, Image: "edge-runtime@1.0#" + n.Type,
		})
	}
	for _, sl := range o.Silences {
		if sl.Node == n.Name {
			s.silentFrom, s.silentTo = start.Add(sl.After), start.Add(sl.After+sl.For)
		}
	}
	return s
}

func (s *simNode) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := s.register(ctx); err == nil {
			break
		} else {
			s.log("Registering the node failed; retrying", "error", err.Error())
		}
		sleep(ctx, s.o.Clock, time.Second)
	}
	for ctx.Err() == nil {
		s.step(ctx)
		sleep(ctx, s.o.Clock, s.o.Tick)
	}
}

func sleep(ctx context.Context, c clock.Clock, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-c.After(d):
	}
}

// register creates the EdgeNode unless it exists.
func (s *simNode) register(ctx context.Context) error {
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

// step renews the Lease when due, follows the services placed on the node
// and reports when something changed.
func (s *simNode) step(ctx context.Context) {
	now := s.o.Clock.Now()
	if !now.Before(s.silentFrom) && now.Before(s.silentTo) {
		return // silent: neither Lease nor report
	}
	if !now.Before(s.nextRenew) {
		if err := s.renewLease(ctx, now); err != nil {
			s.log("Renewing the Lease failed", "error", err.Error())
		} else {
			s.nextRenew = now.Add(s.o.RenewInterval)
		}
	}
	if err := s.follow(ctx, now); err != nil {
		s.log("Reading the node's services failed", "error", err.Error())
		return
	}
	if !now.Before(s.nextMetrics) {
		s.moveMetrics(now)
		s.nextMetrics = now.Add(s.o.MetricsInterval)
	}
	if s.dirty {
		if err := s.report(ctx); err != nil {
			s.log("Reporting failed; retrying", "error", err.Error())
			return
		}
		s.dirty = false
	}
}

// renewLease updates the node's Lease, reading it only when the one kept
// from the last renewal is missing or stale: one write per renewal.
func (s *simNode) renewLease(ctx context.Context, now time.Time) error {
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

// follow runs the instances placed on the node: a new instance or a new
// revision is created, runs after the start delay (or fails), and
// containers of instances that left are removed.
func (s *simNode) follow(ctx context.Context, now time.Time) error {
	list := &edgev1alpha1.EdgeServiceList{}
	if err := s.view.List(ctx, list, client.MatchingFields{index.ServiceByNode: s.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	want := map[string]bool{}
	for i := range list.Items {
		svc := &list.Items[i]
		if svc.DeletionTimestamp != nil {
			continue // stop its containers, so that its finalizer can go
		}
		for _, inst := range svc.Status.Containers {
			if inst.NodeName != s.Name {
				continue
			}
			want[inst.TaskID] = true
			if c := s.containers[inst.TaskID]; c == nil || c.Revision != inst.Revision {
				s.create(svc, inst, now)
			}
		}
	}
	for id, c := range s.containers {
		switch {
		case !want[id]:
			delete(s.containers, id)
			delete(s.readyAt, id)
			s.dirty = true
		case c.State == edgev1alpha1.ContainerCreated && c.FailedMessage == "" && !now.Before(s.readyAt[id]):
			c.State, c.StartedTime = edgev1alpha1.ContainerRunning, ptr.To(metav1.NewTime(now.Truncate(time.Second)))
			c.CPU, c.Memory, c.Size = &edgev1alpha1.CPUUsage{Total: 1, Cores: make([]float64, 2)},
				&edgev1alpha1.MemoryUsage{Limit: 256 << 20, Usage: 16 << 20, MaxUsage: 16 << 20},
				&edgev1alpha1.SizeUsage{Usage: 8 << 20, Limit: 1 << 30}
			s.dirty = true
		}
	}
	return nil
}

func (s *simNode) create(svc *edgev1alpha1.EdgeService, inst edgev1alpha1.ServiceInstance, now time.Time) {
	ref := string(svc.Spec.Image.Ref)
	c := &edgev1alpha1.ObservedContainer{
		Name: inst.Name, ID: s.runtimeID(fmt.Sprintf("%s/%d", inst.TaskID, inst.Revision)), TaskID: inst.TaskID, Revision: inst.Revision,
		State: edgev1alpha1.ContainerCreated, Image: ref, ImageID: "sha256:" + hash(ref)[:24], ImageArch: s.Arch,
		CreatedTime: ptr.To(metav1.NewTime(now.Truncate(time.Second))),
	}
	if s.Type != "linux" {
		c.ID = c.Name // the embedded real-time OS names containers by name
	}
	if s.o.FailImages != nil && s.o.FailImages.MatchString(ref) {
		c.State, c.FailedMessage = edgev1alpha1.ContainerExited, fmt.Sprintf("simulated failure: image %s failed to start", ref)
	}
	s.log("Creating container", "container", c.Name, "revision", c.Revision, "image", ref, "failed", c.FailedMessage != "")
	s.containers[inst.TaskID] = c
	s.readyAt[inst.TaskID] = now.Add(s.o.StartDelay)
	s.dirty = true
}

// moveMetrics lets the figures of running containers wander, and restarts
// the containers of crashing images.
func (s *simNode) moveMetrics(now time.Time) {
	for _, c := range s.containers {
		if c.State != edgev1alpha1.ContainerRunning {
			continue
		}
		total := 0.0
		for i := range c.CPU.Cores {
			c.CPU.Cores[i] = round1(clamp(c.CPU.Cores[i]+s.rnd.NormFloat64()*5, 0, 100))
			total += c.CPU.Cores[i]
		}
		c.CPU.Total = round1(total / float64(len(c.CPU.Cores)))
		c.Memory.Usage = int64(clamp(float64(c.Memory.Usage)+s.rnd.NormFloat64()*4e6, 4<<20, float64(c.Memory.Limit)))
		c.Memory.MaxUsage = max(c.Memory.MaxUsage, c.Memory.Usage)
		c.Size.Usage = min(c.Size.Limit, c.Size.Usage+int64(s.rnd.IntN(1<<16)))
		if s.o.CrashImages != nil && s.o.CrashImages.MatchString(c.Image) {
			c.RestartCount++
			c.StartedTime = ptr.To(metav1.NewTime(now.Truncate(time.Second)))
		}
	}
	s.dirty = true
}

// report applies the node's half of EdgeNode status when it differs from
// what was last reported.
func (s *simNode) report(ctx context.Context) error {
	containers := append([]edgev1alpha1.ObservedContainer(nil), s.system...)
	for _, c := range s.containers {
		containers = append(containers, *c.DeepCopy())
	}
	sort.Slice(containers, func(i, j int) bool { return containers[i].Name < containers[j].Name })
	if reflect.DeepEqual(containers, s.reported) {
		return nil
	}
	info := edgev1alpha1.NodeInfo{Type: s.Type, Arch: s.Arch, OSVersion: "sim", RuntimeVersion: "sim-1", AgentVersion: "edge-agent/sim"}
	if err := ApplyStatus(ctx, s.c, s.Name, info, &s.boot, containers); err != nil {
		return err
	}
	s.reported = containers
	return nil
}

func (s *simNode) runtimeID(seed string) string { return hash(s.Name + "/" + seed)[:12] }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func clamp(v, lo, hi float64) float64 { return min(hi, max(lo, v)) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
