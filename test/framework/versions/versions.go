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

// Package versions follows every version of the services' specs a watch
// delivers, as the manager's own watch would see them, and checks that
// each is recorded exactly once: the chaos and upgrade runs' ledger.
package versions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// Delivered are the versions the watch delivered: per service, each
// generation with a mark a failure names it by.
type Delivered struct {
	mu    sync.Mutex
	gens  map[string]map[int64]string
	ended chan struct{}
}

// Ended is closed once the watch has ended with its context; nil-safe, so
// that a run that failed before it watched can wait for it too.
func (d *Delivered) Ended() <-chan struct{} {
	if d == nil {
		ended := make(chan struct{})
		close(ended)
		return ended
	}
	return d.ended
}

// Watch starts a watch of the services until ctx ends, noting each
// version with mark(service), and returns once it has synced.
func Watch(ctx context.Context, cfg *rest.Config, mark func(*edgev1alpha1.EdgeService) string) (*Delivered, error) {
	d := &Delivered{gens: map[string]map[int64]string{}, ended: make(chan struct{})}
	view, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, err
	}
	inf, err := view.GetInformer(ctx, &edgev1alpha1.EdgeService{})
	if err != nil {
		return nil, err
	}
	see := func(o any) {
		if s, ok := o.(*edgev1alpha1.EdgeService); ok {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.gens[s.Name] == nil {
				d.gens[s.Name] = map[int64]string{}
			}
			d.gens[s.Name][s.Generation] = mark(s)
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }}); err != nil {
		return nil, err
	}
	go func() {
		defer close(d.ended)
		_ = view.Start(ctx)
	}()
	if !view.WaitForCacheSync(ctx) {
		return nil, errors.New("the run's own watch of services did not sync")
	}
	return d, nil
}

// Check counts the delivered versions no DeployRecord in namespace holds
// (by the generation it records) and those recorded more than once, and
// says which, in order.
func (d *Delivered) Check(ctx context.Context, c client.Reader, namespace string) (lost, duplicates int, notes []string, err error) {
	records := &edgev1alpha1.DeployRecordList{}
	if err := c.List(ctx, records, client.InNamespace(namespace)); err != nil {
		return 0, 0, nil, err
	}
	recorded := map[string]map[int64]int{}
	for _, rec := range records.Items {
		if recorded[rec.Spec.ServiceName] == nil {
			recorded[rec.Spec.ServiceName] = map[int64]int{}
		}
		gen, err := strconv.ParseInt(rec.Annotations[edgev1alpha1.AnnotationGeneration], 10, 64)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("record %s has no generation: %w", rec.Name, err)
		}
		recorded[rec.Spec.ServiceName][gen]++
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, gens := range d.gens {
		for gen, mark := range gens {
			switch n := recorded[name][gen]; {
			case n == 0:
				lost++
				notes = append(notes, fmt.Sprintf("%s: generation %d (%s) delivered but not recorded", name, gen, mark))
			case n > 1:
				duplicates += n - 1
				notes = append(notes, fmt.Sprintf("%s: generation %d (%s) recorded %d times", name, gen, mark, n))
			}
		}
	}
	sort.Strings(notes)
	return lost, duplicates, notes, nil
}
