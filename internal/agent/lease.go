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
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/unreachable"
)

// keepLease registers the node and renews its Lease on its own schedule,
// as the kubelet's node lease controller does. It makes no runtime call:
// nothing the engine does delays a renewal. It calls the API server only
// when its own back-off allows: a report that fails does not hold it up.
func (s *node) keepLease(ctx context.Context) {
	var lease *coordinationv1.Lease
	var nextRenew time.Time
	// A renewal is cut after a renew interval, as the kubelet's heartbeat
	// client is: one stuck on a dead stream would otherwise wait out the
	// API timeout, longer than a short grace period, when another try
	// could get through.
	renewTimeout := min(apiTimeout, s.o.RenewInterval)
	for ctx.Err() == nil {
		now := s.o.Clock.Now()
		if !s.silent(now) && s.beats.ready(now) {
			if !s.registered.Load() && s.call(ctx, "Registering the node", apiTimeout, s.register) {
				s.registered.Store(true)
				s.reporter.changed()
			}
			if now = s.o.Clock.Now(); !now.Before(nextRenew) &&
				s.call(ctx, "Renewing the Lease", renewTimeout, func(ctx context.Context) error { return s.renewLease(ctx, &lease, now) }) {
				nextRenew = now.Add(s.o.RenewInterval)
			}
		}
		// Next: when the renewal is due; while the link is down, when its
		// back-off ends; a failed call is tried again at the next tick.
		now = s.o.Clock.Now()
		wait := nextRenew.Sub(now)
		if !s.registered.Load() || s.silent(now) {
			wait = min(wait, s.o.Tick)
		}
		if !s.beats.ready(now) {
			wait = s.beats.until(now)
		}
		if wait <= 0 {
			wait = s.o.Tick
		}
		select {
		case <-ctx.Done():
		case <-s.o.Clock.After(wait):
		}
	}
}

// call makes one call to the API server, bounded by d, and notes its
// outcome on the link; when the link comes back, the reporter reports at
// once what was held meanwhile, in one apply.
func (s *node) call(ctx context.Context, what string, d time.Duration, f func(context.Context) error) bool {
	err := within(ctx, d, f)
	// Timed at the call's end: one that waited out its bound must not
	// count that wait as back-off already served.
	if s.beats.result(s.o.Clock.Now(), err) {
		s.reporter.linkBack()
	}
	if err != nil && !unreachable.Is(err) && ctx.Err() == nil {
		s.log(what+" failed", "error", err.Error())
	}
	return err == nil
}

// register creates the EdgeNode unless it exists. Its spec carries no
// address: spec.address is the operator's, and the node reports its own
// in status.nodeInfo.address.
func (s *node) register(ctx context.Context) error {
	n := &edgev1alpha1.EdgeNode{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Spec:       edgev1alpha1.EdgeNodeSpec{Type: s.Type, Arch: s.Arch},
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

// renewLease updates the node's Lease, reading it only when the one kept
// from the last renewal is missing or stale: one write per renewal.
func (s *node) renewLease(ctx context.Context, kept **coordinationv1.Lease, now time.Time) error {
	renew := metav1.NewMicroTime(now)
	if l := *kept; l != nil {
		l.Spec.RenewTime = &renew
		err := s.c.Update(ctx, l)
		if err == nil {
			return nil
		}
		*kept = nil
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
		*kept = lease
	}
	return err
}
