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
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// puller makes images present for a node's instances, as the kubelet's
// image manager does: the pull policy decides whether to pull, at most
// maxParallel pulls run at once, instances of one image share one pull,
// and a pull that makes no progress for deadline is cut.
type puller struct {
	rt       Runtime
	clock    clock.Clock
	deadline time.Duration
	slots    chan struct{}
	mu       sync.Mutex
	pulls    map[string]*pull
}

// pull is one pull of an image, shared by every instance that needs it.
type pull struct {
	image string
	ctx   context.Context
	done  chan struct{}
	err   error
	// cancel cuts the pull; waiters counts the instances waiting on it:
	// when the last one stops waiting, the pull is cut.
	cancel  context.CancelCauseFunc
	mu      sync.Mutex
	waiters int
	queued  bool
	last    PullProgress
	// moved is when the pull last made progress.
	moved time.Time
}

// errPullStalled is the cause of a pull cut for making no progress.
var errPullStalled = errors.New("no progress")

func newPuller(rt Runtime, clk clock.Clock, maxParallel int, deadline time.Duration) *puller {
	return &puller{rt: rt, clock: clk, deadline: deadline, slots: make(chan struct{}, max(1, maxParallel)), pulls: map[string]*pull{}}
}

// ensure makes image present as policy says, pulling it when needed; it
// calls started with the pull an instance waits on, so that its progress
// can be reported. ctx bounds the wait, not a pull others share.
func (p *puller) ensure(ctx context.Context, image string, policy edgev1alpha1.PullPolicy, creds []byte, started func(*pull)) error {
	if policy != edgev1alpha1.PullAlways {
		var present bool
		err := within(ctx, engineTimeout, func(ctx context.Context) (err error) { present, err = p.rt.HasImage(ctx, image); return err })
		switch {
		case err != nil:
			return err
		case present:
			return nil
		case policy == edgev1alpha1.PullNever:
			return fmt.Errorf("image %s is not present on the node, and the service's pullPolicy Never forbids pulling it", image)
		}
	}
	pl := p.join(image, creds)
	started(pl)
	select {
	case <-pl.done:
		return pl.err
	case <-ctx.Done():
		p.leave(pl)
		return context.Cause(ctx)
	}
}

// join returns the pull of image under way with the same credentials, or
// starts one.
func (p *puller) join(image string, creds []byte) *pull {
	key := image + "\x00" + fmt.Sprintf("%x", sha256.Sum256(creds))
	p.mu.Lock()
	defer p.mu.Unlock()
	// A pull its last waiter cut is not joined: it is ending.
	if pl := p.pulls[key]; pl != nil && pl.ctx.Err() == nil {
		pl.mu.Lock()
		pl.waiters++
		pl.mu.Unlock()
		return pl
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	pl := &pull{image: image, ctx: ctx, done: make(chan struct{}), cancel: cancel, waiters: 1, queued: true}
	p.pulls[key] = pl
	go func() {
		pl.err = p.run(ctx, pl, creds)
		cancel(nil)
		p.mu.Lock()
		if p.pulls[key] == pl {
			delete(p.pulls, key)
		}
		p.mu.Unlock()
		close(pl.done)
	}()
	return pl
}

// leave notes an instance that no longer waits; the last one cuts the pull.
func (p *puller) leave(pl *pull) {
	pl.mu.Lock()
	pl.waiters--
	last := pl.waiters == 0
	pl.mu.Unlock()
	if last {
		pl.cancel(context.Canceled)
	}
}

// run waits for a slot, then pulls while a watchdog cuts the pull once it
// has made no progress for the deadline.
func (p *puller) run(ctx context.Context, pl *pull, creds []byte) error {
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	pl.mu.Lock()
	pl.queued, pl.moved = false, p.clock.Now()
	pl.mu.Unlock()
	pctx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	go func() {
		for {
			pl.mu.Lock()
			left := p.deadline - p.clock.Since(pl.moved)
			pl.mu.Unlock()
			if left <= 0 {
				cut(errPullStalled)
				return
			}
			select {
			case <-pctx.Done():
				return
			case <-p.clock.After(left):
			}
		}
	}()
	err := p.rt.PullImage(pctx, pl.image, creds, func(pr PullProgress) {
		pl.mu.Lock()
		pl.last, pl.moved = pr, p.clock.Now()
		pl.mu.Unlock()
	})
	if errors.Is(context.Cause(pctx), errPullStalled) {
		return fmt.Errorf("pulling image %s made no progress for %s and was cut", pl.image, p.deadline)
	}
	return err
}

// progress is how far the pull has come; queued while it waits for a slot.
func (pl *pull) progress() (PullProgress, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.last, pl.queued
}
