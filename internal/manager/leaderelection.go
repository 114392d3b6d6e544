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
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// The leader records every version of a service's spec that some replica's
// watch delivered, from the history each replica keeps
// (docs/design/0009-every-version-recorded-through-failover.md). A replica started after the leader died has
// not seen the versions superseded before its first list; the standby that
// watched all along has. So a replica that starts while another holds the
// lease does not take it over for a hold-off, long enough for a standby to
// win (the lease duration, then up to 2.2 retry periods of jittered
// retries): it renews nothing it does not hold, and a lease that is free
// or released it takes at once. Alone, it leads a few seconds later than it
// could.

// holdOff is how long a starting replica leaves an expired lease to a
// standby.
func holdOff(leaseDuration, retryPeriod time.Duration) time.Duration {
	return leaseDuration + 3*retryPeriod
}

// errHoldingOff refuses a takeover during the hold-off.
var errHoldingOff = errors.New("leaving the lease to a replica that has watched longer")

// holdOffLock is a leader election lock that refuses, until a time, to
// take the lease from another holder.
type holdOffLock struct {
	resourcelock.Interface
	clock clock.PassiveClock
	until time.Time

	mu sync.Mutex
	// holder is who held the lease at the last read.
	holder string
}

func (l *holdOffLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	if err == nil {
		l.mu.Lock()
		l.holder = rec.HolderIdentity
		l.mu.Unlock()
	}
	return rec, raw, err
}

// Update is a renewal, or the takeover of an expired or released lease:
// refused while holding off from another holder's lease.
func (l *holdOffLock) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	holder := l.holder
	l.mu.Unlock()
	if holder != "" && holder != l.Identity() && l.clock.Now().Before(l.until) {
		return errHoldingOff
	}
	return l.Interface.Update(ctx, rec)
}

// leaseLock is the Lease lock controller-runtime would make, wrapped in
// the hold-off. Its Events go to events once the manager exists. It is
// built here rather than by controller-runtime's
// leaderelection.NewResourceLock, which asks for the manager's event
// recorders, and the lock must exist before the manager does.
func leaseLock(cfg *rest.Config, namespace, name string, o Options, events *lazyEvents) (resourcelock.Interface, error) {
	if namespace == "" {
		data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if err != nil {
			return nil, fmt.Errorf("set --leader-election-namespace when not running in a pod: %w", err)
		}
		namespace = string(data)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	id := host + "_" + string(uuid.NewUUID())
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// One hung request must not cost the lease.
	cfg.Timeout = max(o.RenewDeadline/2, time.Second)
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	coord, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, core, coord,
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: events})
	if err != nil {
		return nil, err
	}
	c := clock.RealClock{}
	return &holdOffLock{Interface: lock, clock: c, until: c.Now().Add(holdOff(o.LeaseDuration, o.RetryPeriod))}, nil
}

// lazyEvents forwards the lock's Events to a recorder set later.
type lazyEvents struct {
	mu sync.Mutex
	to resourcelock.EventRecorder
}

func (e *lazyEvents) set(to resourcelock.EventRecorder) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.to = to
}

func (e *lazyEvents) Eventf(obj runtime.Object, eventType, reason, message string, args ...any) {
	e.mu.Lock()
	to := e.to
	e.mu.Unlock()
	if to != nil {
		to.Eventf(obj, eventType, reason, message, args...)
	}
}
