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

package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
	"github.com/edgeplane/edgeplane/internal/names"
)

// observedConfig is one version of a service's spec as a watch event
// delivered it.
type observedConfig struct {
	generation int64
	spec       edgev1alpha1.EdgeServiceSpec
}

// configHistory keeps the spec versions the watch delivered that have not
// been recorded yet. A reconcile reads only the newest version from the
// cache; without this, two quick changes would be recorded as one. It is a
// best effort on top of the level-triggered logic: what a crash loses is
// versions that were superseded while no manager was running.
type configHistory struct {
	mu    sync.Mutex
	byUID map[types.UID][]observedConfig
}

func newConfigHistory() *configHistory {
	return &configHistory{byUID: map[types.UID][]observedConfig{}}
}

// A nil history, as in a reconciler not wired to a watch, keeps nothing.
func (h *configHistory) observe(s *edgev1alpha1.EdgeService) {
	if h == nil || s.DeletionTimestamp != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byUID[s.UID]
	if n := len(list); n > 0 && list[n-1].generation >= s.Generation {
		return
	}
	h.byUID[s.UID] = append(list, observedConfig{generation: s.Generation, spec: *s.Spec.DeepCopy()})
}

// pending returns the versions newer than generation.
func (h *configHistory) pending(uid types.UID, generation int64) []observedConfig {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []observedConfig
	for _, c := range h.byUID[uid] {
		if c.generation > generation {
			out = append(out, c)
		}
	}
	return out
}

// forget drops the versions up to generation.
func (h *configHistory) forget(uid types.UID, generation int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byUID[uid]
	i := 0
	for i < len(list) && list[i].generation <= generation {
		i++
	}
	if i == len(list) {
		delete(h.byUID, uid)
		return
	}
	h.byUID[uid] = append([]observedConfig(nil), list[i:]...)
}

func (h *configHistory) drop(uid types.UID) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byUID, uid)
}

// configHash hashes the deployment configuration: the whole spec but
// revisionHistoryLimit, which changes how many records are kept, not what
// is deployed.
func configHash(spec edgev1alpha1.EdgeServiceSpec) string {
	spec.RevisionHistoryLimit = nil
	data, err := json.Marshal(spec)
	if err != nil {
		panic(err) // a spec always marshals
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

func recordGeneration(r *edgev1alpha1.DeployRecord) int64 {
	g, _ := strconv.ParseInt(r.Annotations[edgev1alpha1.AnnotationGeneration], 10, 64)
	return g
}

// listRecords returns the service's records from the cache, oldest first.
func (r *EdgeServiceReconciler) listRecords(ctx context.Context, svc *edgev1alpha1.EdgeService) ([]edgev1alpha1.DeployRecord, error) {
	list := &edgev1alpha1.DeployRecordList{}
	if err := r.List(ctx, list, client.InNamespace(svc.Namespace), client.MatchingFields{index.RecordByServiceUID: string(svc.UID)}); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Spec.Revision < list.Items[j].Spec.Revision })
	return list.Items, nil
}

// syncRecords appends a DeployRecord for every configuration of the service
// not recorded yet and returns the newest record.
//
// Exactly once: revision n is always stored under the name <service>-<n>,
// so whatever a stale cache, a crash between the create and the status write,
// or a second manager makes this reconcile believe, a second create of the
// same revision fails with AlreadyExists. The live record then says whether
// it already holds this configuration (adopt it) or an earlier one (try the
// next revision number).
func (r *EdgeServiceReconciler) syncRecords(ctx context.Context, svc *edgev1alpha1.EdgeService, records []edgev1alpha1.DeployRecord, nodesOf func(edgev1alpha1.EdgeServiceSpec) []edgev1alpha1.RecordNode) (*edgev1alpha1.DeployRecord, error) {
	var latest *edgev1alpha1.DeployRecord
	if n := len(records); n > 0 {
		latest = records[n-1].DeepCopy()
	}
	lastGen := int64(0)
	if latest != nil {
		lastGen = recordGeneration(latest)
	}
	candidates := r.history.pending(svc.UID, lastGen)
	if svc.Generation > lastGen && (len(candidates) == 0 || candidates[len(candidates)-1].generation < svc.Generation) {
		candidates = append(candidates, observedConfig{generation: svc.Generation, spec: svc.Spec})
	}
	if len(candidates) > 0 {
		// Something may need recording. The cache may lag behind records
		// written moments ago; compare against the newest record there is.
		var err error
		if latest, err = r.newestRecord(ctx, svc, latest); err != nil {
			return nil, err
		}
	}
	lastRev, lastHash := svc.Status.Revision, ""
	if latest != nil {
		lastGen, lastHash = recordGeneration(latest), latest.Annotations[edgev1alpha1.AnnotationConfigHash]
		lastRev = max(lastRev, latest.Spec.Revision)
	}

	for _, c := range candidates {
		if c.generation <= lastGen {
			continue
		}
		hash := configHash(c.spec)
		if hash == lastHash {
			continue // e.g. only revisionHistoryLimit changed
		}
		for {
			rec := r.newRecord(svc, c, lastRev+1, hash, nodesOf(c.spec))
			err := r.Create(ctx, rec)
			if err == nil {
				logf.FromContext(ctx).Info("Recorded a new revision", "revision", rec.Spec.Revision, "deployRecord", rec.Name, "generation", c.generation)
				r.Recorder.Eventf(svc, rec, corev1.EventTypeNormal, "RevisionRecorded", "Record",
					"Recorded revision %d of the deployment configuration in DeployRecord %s", rec.Spec.Revision, rec.Name)
				latest = rec
				break
			}
			if !apierrors.IsAlreadyExists(err) {
				return nil, err
			}
			live := &edgev1alpha1.DeployRecord{}
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(rec), live); err != nil {
				return nil, err
			}
			if live.Labels[edgev1alpha1.LabelServiceUID] != string(svc.UID) {
				return nil, fmt.Errorf("DeployRecord %s belongs to another service", rec.Name)
			}
			latest = live
			if recordGeneration(live) >= c.generation || live.Annotations[edgev1alpha1.AnnotationConfigHash] == hash {
				break // this configuration, or a later one, is recorded already
			}
			lastRev = live.Spec.Revision // an earlier configuration holds that number
		}
		lastGen, lastRev, lastHash = recordGeneration(latest), latest.Spec.Revision, latest.Annotations[edgev1alpha1.AnnotationConfigHash]
	}
	r.history.forget(svc.UID, lastGen)
	return latest, nil
}

// newestRecord follows the record names <service>-<n+1>, <n+2>... on the API
// server past the newest record the cache knows, and returns the last one
// that exists.
func (r *EdgeServiceReconciler) newestRecord(ctx context.Context, svc *edgev1alpha1.EdgeService, latest *edgev1alpha1.DeployRecord) (*edgev1alpha1.DeployRecord, error) {
	rev := svc.Status.Revision
	if latest != nil {
		rev = max(rev, latest.Spec.Revision)
	}
	if latest == nil || latest.Spec.Revision < rev {
		rev-- // the status names a record the cache has not seen: read it too
	}
	for {
		live := &edgev1alpha1.DeployRecord{}
		key := client.ObjectKey{Namespace: svc.Namespace, Name: names.DeployRecord(svc.Name, rev+1)}
		if err := r.APIReader.Get(ctx, key, live); err != nil {
			if apierrors.IsNotFound(err) {
				return latest, nil
			}
			return nil, err
		}
		if live.Labels[edgev1alpha1.LabelServiceUID] != string(svc.UID) {
			return latest, nil // a record of an earlier service of the same name
		}
		latest, rev = live, live.Spec.Revision
	}
}

func (r *EdgeServiceReconciler) newRecord(svc *edgev1alpha1.EdgeService, c observedConfig, rev int64, hash string, nodes []edgev1alpha1.RecordNode) *edgev1alpha1.DeployRecord {
	spec := c.spec
	image := spec.Image
	image.PullPolicy = image.EffectivePullPolicy()
	rec := &edgev1alpha1.DeployRecord{
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.DeployRecord(svc.Name, rev),
			Namespace: svc.Namespace,
			Labels:    map[string]string{edgev1alpha1.LabelServiceUID: string(svc.UID)},
			Annotations: map[string]string{
				edgev1alpha1.AnnotationConfigHash: hash,
				edgev1alpha1.AnnotationGeneration: strconv.FormatInt(c.generation, 10),
			},
		},
		Spec: edgev1alpha1.DeployRecordSpec{
			ServiceName:  svc.Name,
			Revision:     rev,
			Path:         spec.Path,
			Image:        image,
			Action:       spec.Action,
			Cmd:          spec.Cmd,
			Config:       spec.Config,
			VSOA:         spec.VSOA,
			Policy:       spec.Policy,
			Factor:       spec.Factor,
			NodeSelector: spec.NodeSelector,
			Nodes:        nodes,
		},
	}
	// The scheme always knows both kinds, so this cannot fail.
	_ = controllerutil.SetControllerReference(svc, rec, r.Scheme())
	return rec
}

// pruneRecords deletes the oldest records beyond revisionHistoryLimit,
// never the current one.
func (r *EdgeServiceReconciler) pruneRecords(ctx context.Context, svc *edgev1alpha1.EdgeService, records []edgev1alpha1.DeployRecord, current string) error {
	limit := 10
	if svc.Spec.RevisionHistoryLimit != nil {
		limit = int(*svc.Spec.RevisionHistoryLimit)
	}
	excess := len(records) - limit
	for i := 0; i < len(records) && excess > 0; i++ {
		rec := &records[i]
		if rec.Name == current {
			continue
		}
		if err := r.Delete(ctx, rec, client.Preconditions{UID: &rec.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
		excess--
	}
	return nil
}
