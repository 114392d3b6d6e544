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

package kubectledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// conditionStalled is the condition the manager sets True when a service
// cannot go on without a change: an instance failed or could not be
// placed, its canary failed, or its rollout passed its deadline.
const conditionStalled = edgev1alpha1.ConditionStalled

// errStalled says a rollout stopped; kubectl edge exits non-zero.
var errStalled = errors.New("rollout stalled")

// rolloutStatus says where a service's rollout stands, as kubectl
// rollout status says it of a Deployment: a line to print, whether it
// is done, and an error once it cannot finish without a change.
func rolloutStatus(svc *edgev1alpha1.EdgeService) (string, bool, error) {
	st := &svc.Status
	name := kindName + svc.Name
	if st.ObservedGeneration < svc.Generation {
		return fmt.Sprintf("Waiting for %s's generation %d to be observed...", name, svc.Generation), false, nil
	}
	if c := meta.FindStatusCondition(st.Conditions, conditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		return "", false, fmt.Errorf("%w: %s revision %d: %s: %s", errStalled, name, st.Revision, c.Reason, c.Message)
	}
	if st.Revision > 0 && st.DeployedRevision == st.Revision && st.ReadyReplicas >= st.Replicas {
		return fmt.Sprintf("%s successfully rolled out: revision %d, %d of %d instances ready", name, st.Revision, st.ReadyReplicas, st.Replicas), true, nil
	}
	paused := ""
	if svc.Spec.Paused {
		paused = " (paused)"
	}
	if st.UpdatedReplicas < st.Replicas {
		return fmt.Sprintf("Waiting for %s's rollout to finish: %d of %d instances updated to revision %d, %d run it%s...",
			name, st.UpdatedReplicas, st.Replicas, st.Revision, st.ReadyReplicas, paused), false, nil
	}
	return fmt.Sprintf("Waiting for %s's rollout to finish: %d of %d instances run revision %d%s...", name, st.ReadyReplicas, st.Replicas, st.Revision, paused), false, nil
}

// pollInterval is how often status reads the service again.
const pollInterval = time.Second

// status follows a service's rollout until it is done, has stalled, or
// timeout (0: none) passes, printing each new state. Each read has its
// own deadline, perCall; the overall timeout is checked between reads, so
// that a read is never cut short (or refused by the client's rate
// limiter) for the time left.
func (r *rollout) status(ctx context.Context, namespace, name string, timeout, perCall time.Duration) error {
	var end time.Time
	if timeout > 0 {
		end = time.Now().Add(timeout)
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	last := ""
	for {
		svc := &edgev1alpha1.EdgeService{}
		callCtx, cancel := context.WithTimeout(ctx, perCall)
		err := r.c.Get(callCtx, client.ObjectKey{Namespace: namespace, Name: name}, svc)
		cancel()
		if err != nil {
			return err
		}
		msg, done, err := rolloutStatus(svc)
		if err != nil {
			return err
		}
		if msg != last {
			fmt.Fprintln(r.out, msg)
			last = msg
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if !end.IsZero() && !time.Now().Before(end) {
			return fmt.Errorf("timed out waiting for the rollout of %s%s to finish: %s", kindName, name, last)
		}
	}
}
