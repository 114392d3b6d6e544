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
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// watch starts the run's own view of the cluster: every version of every
// service and every record into the ledger, nodes leaving online, and the
// manager's rollbacks, as the events come (Events expire after EventTTL,
// records are pruned: neither can be read back at the end).
func (r *run) watch(ctx context.Context) error {
	view, err := cache.New(r.restCfg, cache.Options{Scheme: testenv.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return err
	}
	// on is called with old nil for an object first seen.
	watches := []struct {
		obj client.Object
		on  func(old, cur any)
	}{
		{&edgev1alpha1.EdgeService{}, func(_, cur any) {
			if s, ok := cur.(*edgev1alpha1.EdgeService); ok {
				r.ledger.Delivered(s.UID, s.Name, s.Generation, ConfigHash(&s.Spec))
			}
		}},
		{&edgev1alpha1.DeployRecord{}, func(_, cur any) {
			rec, ok := cur.(*edgev1alpha1.DeployRecord)
			if !ok {
				return
			}
			uid := rec.Labels[edgev1alpha1.LabelServiceUID]
			gen, err := strconv.ParseInt(rec.Annotations[edgev1alpha1.AnnotationGeneration], 10, 64)
			if uid == "" || err != nil {
				return // not yet adopted: its update will say
			}
			r.ledger.Recorded(types.UID(uid), gen, rec.UID)
		}},
		{&edgev1alpha1.EdgeNode{}, func(old, cur any) {
			was, ok1 := old.(*edgev1alpha1.EdgeNode)
			n, ok2 := cur.(*edgev1alpha1.EdgeNode)
			if !ok1 || !ok2 || was.Status.Status != edgev1alpha1.NodeOnline || n.Status.Status == edgev1alpha1.NodeOnline {
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.churning {
				r.offline = append(r.offline, n.Name+" at "+time.Now().Format(time.TimeOnly))
			}
		}},
		{&eventsv1.Event{}, func(old, cur any) {
			e, ok := cur.(*eventsv1.Event)
			if old != nil || !ok || e.Reason != edgev1alpha1.ReasonRolledBack || !strings.HasPrefix(e.Note, "Rolled back") {
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.churning {
				r.res.AutoRollbacks++
			}
		}},
	}
	for _, w := range watches {
		inf, err := view.GetInformer(ctx, w.obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(cur any) { w.on(nil, cur) }, UpdateFunc: w.on}); err != nil {
			return err
		}
	}
	go func() { _ = view.Start(ctx) }()
	if !view.WaitForCacheSync(ctx) {
		return errors.New("the run's own watch did not sync")
	}
	r.view = view
	return nil
}
