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

package edgeservice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/shared/records"
)

// observedConfig is one version of a service's spec as a watch event
// delivered it.
type observedConfig struct {
	generation int64
	spec       edgev1alpha1.EdgeServiceSpec
}

// configHistory keeps the spec versions the watch delivered that have not
// been recorded yet. A reconcile reads only the newest version from the
// cache; without this, two quick changes would be recorded as one. Every
// replica keeps it, leader or not, so a standby that takes over knows the
// versions superseded before it did; records seen in the cache trim it on
// every replica. What it cannot know is a version superseded while no
// replica was watching.
type configHistory struct {
	mu    sync.Mutex
	byUID map[types.UID]*serviceHistory
}

type serviceHistory struct {
	// pending are the versions not yet known to be recorded, oldest first.
	pending []observedConfig
	// newest is the newest generation observed; recorded is the newest one
	// known to be recorded. Older deliveries are ignored.
	newest, recorded int64
}

// maxPendingVersions bounds the versions kept per service, so that a
// service changed faster than it can be recorded costs bounded memory; the
// oldest go first, and the newest is always recorded.
const maxPendingVersions = 256

func newConfigHistory() *configHistory {
	return &configHistory{byUID: map[types.UID]*serviceHistory{}}
}

func (h *configHistory) entry(uid types.UID) *serviceHistory {
	e := h.byUID[uid]
	if e == nil {
		e = &serviceHistory{}
		h.byUID[uid] = e
	}
	return e
}

// addVersion keeps a version of the service seen by the watch until it is
// recorded. A nil history, as in a reconciler not wired to a watch, keeps
// nothing.
func (h *configHistory) addVersion(s *edgev1alpha1.EdgeService) {
	if h == nil || s.DeletionTimestamp != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entry(s.UID)
	if s.Generation <= max(e.newest, e.recorded) {
		return
	}
	e.newest = s.Generation
	e.pending = append(e.pending, observedConfig{generation: s.Generation, spec: *s.Spec.DeepCopy()})
	if n := len(e.pending) - maxPendingVersions; n > 0 {
		e.pending = append([]observedConfig(nil), e.pending[n:]...)
	}
}

// pending returns the versions newer than generation.
func (h *configHistory) pending(uid types.UID, generation int64) []observedConfig {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []observedConfig
	if e := h.byUID[uid]; e != nil {
		for _, c := range e.pending {
			if c.generation > generation {
				out = append(out, c)
			}
		}
	}
	return out
}

// markRecorded drops the versions up to generation, which is recorded. A
// generation above the newest observed is capped there: it comes from an
// annotation and may be wrong.
func (h *configHistory) markRecorded(uid types.UID, generation int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.byUID[uid]
	if e == nil {
		return
	}
	generation = min(generation, e.newest)
	e.recorded = max(e.recorded, generation)
	i := 0
	for i < len(e.pending) && e.pending[i].generation <= generation {
		i++
	}
	e.pending = append([]observedConfig(nil), e.pending[i:]...)
}

// forgetRecorded trims the history by a record seen in the cache, when the
// record holds the version of the generation it names: an edited annotation
// cannot make versions be forgotten.
func (h *configHistory) forgetRecorded(rec *edgev1alpha1.DeployRecord) {
	if h == nil {
		return
	}
	uid := types.UID(rec.Labels[edgev1alpha1.LabelServiceUID])
	g, err := strconv.ParseInt(rec.Annotations[edgev1alpha1.AnnotationGeneration], 10, 64)
	if err != nil || uid == "" {
		return
	}
	h.mu.Lock()
	var spec *edgev1alpha1.EdgeServiceSpec
	if e := h.byUID[uid]; e != nil {
		for i := range e.pending {
			if e.pending[i].generation == g {
				spec = &e.pending[i].spec
			}
		}
	}
	h.mu.Unlock()
	if spec != nil && serviceHash(*spec) == recordHash(rec) {
		h.markRecorded(uid, g)
	}
}

func (h *configHistory) drop(uid types.UID) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byUID, uid)
}

// maxSlotSkips bounds how many record names held by objects that are not
// this service's records one reconcile steps over.
const maxSlotSkips = 100

// configHash hashes a deployment configuration as records.Config holds
// it. It is computed from the content of a service or of a record, never
// read from an annotation anyone could edit.
func configHash(c records.Config) string {
	data, err := json.Marshal(c)
	if err != nil {
		panic(err) // a spec always marshals
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

func serviceHash(spec edgev1alpha1.EdgeServiceSpec) string {
	return configHash(records.ServiceConfig(&spec))
}

func recordHash(rec *edgev1alpha1.DeployRecord) string {
	return configHash(records.RecordConfig(rec))
}

// recordGeneration is the service generation a record says it holds. A
// value above the service's generation cannot be true (someone edited the
// annotation) and counts as unknown, so it cannot hide later changes.
func recordGeneration(rec *edgev1alpha1.DeployRecord, svc *edgev1alpha1.EdgeService) int64 {
	g, err := strconv.ParseInt(rec.Annotations[edgev1alpha1.AnnotationGeneration], 10, 64)
	if err != nil || g < 0 || g > svc.Generation {
		return 0
	}
	return g
}

// listRecords returns the service's records from the cache, oldest first.
func (r *Reconciler) listRecords(ctx context.Context, svc *edgev1alpha1.EdgeService) ([]edgev1alpha1.DeployRecord, error) {
	list := &edgev1alpha1.DeployRecordList{}
	if err := r.List(ctx, list, client.InNamespace(svc.Namespace), client.MatchingFields{index.RecordByServiceName: svc.Name}); err != nil {
		return nil, err
	}
	out := list.Items[:0]
	for i := range list.Items {
		if records.Of(svc, &list.Items[i]) {
			out = append(out, list.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Revision < out[j].Spec.Revision })
	return out, nil
}

// adopt makes rec the service's own: controlled by it and labelled with its
// UID. Records lose both when their service was deleted with orphaning and
// created again, when they were applied by hand or restored, or when
// someone removed the label.
func (r *Reconciler) adopt(ctx context.Context, svc *edgev1alpha1.EdgeService, rec *edgev1alpha1.DeployRecord) error {
	if metav1.IsControlledBy(rec, svc) && rec.Labels[edgev1alpha1.LabelServiceUID] == string(svc.UID) {
		return nil
	}
	patch := client.MergeFromWithOptions(rec.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if err := controllerutil.SetControllerReference(svc, rec, r.Scheme()); err != nil {
		return err
	}
	if rec.Labels == nil {
		rec.Labels = map[string]string{}
	}
	rec.Labels[edgev1alpha1.LabelServiceUID] = string(svc.UID)
	if err := r.Patch(ctx, rec, patch); err != nil {
		return err
	}
	logf.FromContext(ctx).Info("Adopted a DeployRecord", "deployRecord", rec.Name, "revision", rec.Spec.Revision)
	return nil
}

// syncRecords appends a DeployRecord for every configuration of the service
// not recorded yet and returns the newest record.
//
// Exactly once: revision n is always stored under the name <service>-<n>,
// so whatever a stale cache, a crash between the create and the status write,
// or a second manager makes this reconcile believe, a second create of the
// same revision fails with AlreadyExists. The live record then says whether
// it already holds this configuration (adopt it) or an earlier one (try the
// next revision number). What a record holds is read from its spec, which
// is immutable; its annotations are hints.
func (r *Reconciler) syncRecords(ctx context.Context, svc *edgev1alpha1.EdgeService, existing []edgev1alpha1.ServiceInstance, recs []edgev1alpha1.DeployRecord, nodesOf func(edgev1alpha1.EdgeServiceSpec) []edgev1alpha1.RecordNode) (*edgev1alpha1.DeployRecord, error) {
	var latest *edgev1alpha1.DeployRecord
	for i := range recs {
		if err := r.adopt(ctx, svc, &recs[i]); err != nil {
			return nil, err
		}
	}
	if n := len(recs); n > 0 {
		latest = recs[n-1].DeepCopy()
	}
	lastGen := int64(0)
	if latest != nil {
		lastGen = recordGeneration(latest, svc)
	}
	candidates := r.history.pending(svc.UID, lastGen)
	if svc.Generation > lastGen && (len(candidates) == 0 || candidates[len(candidates)-1].generation < svc.Generation) {
		candidates = append(candidates, observedConfig{generation: svc.Generation, spec: svc.Spec})
	}
	// Instances run the revision their nodes were told: a revision number
	// they ran is never given to another configuration.
	running := int64(0)
	for _, inst := range existing {
		running = max(running, inst.Revision)
	}
	if len(candidates) > 0 {
		// Something may need recording. The cache may lag behind records
		// written moments ago; compare against the newest record there is.
		var err error
		if latest, err = r.newestRecord(ctx, svc, latest); err != nil {
			return nil, err
		}
		if err := r.staleAgainst(ctx, svc, latest); err != nil {
			return nil, err
		}
		if r.lostCurrent(svc, latest, running) {
			// Someone deleted the current record, and the spec is still the
			// one it held: write it again under its own revision, so that
			// no instance restarts for a configuration it already runs.
			candidates = []observedConfig{{generation: svc.Generation, spec: svc.Spec}}
			running--
		}
	}
	lastRev, lastHash := running, ""
	if latest != nil {
		lastGen, lastRev = recordGeneration(latest, svc), max(lastRev, latest.Spec.Revision)
		if len(candidates) > 0 {
			lastHash = recordHash(latest) // hashing costs a marshal: only when comparing
		}
	}

	for _, c := range candidates {
		if c.generation <= lastGen {
			continue
		}
		hash := serviceHash(c.spec)
		if hash == lastHash {
			continue // e.g. only revisionHistoryLimit changed
		}
		live, err := r.record(ctx, svc, c, lastRev+1, hash, nodesOf)
		if err != nil {
			return nil, err
		}
		latest = live
		lastGen, lastRev, lastHash = recordGeneration(latest, svc), latest.Spec.Revision, recordHash(latest)
	}
	if latest == nil {
		return nil, fmt.Errorf("no DeployRecord holds the configuration of generation %d", svc.Generation)
	}
	r.history.markRecorded(svc.UID, lastGen)
	return latest, nil
}

// errStaleService says a record was written from a newer generation of
// the service than this reconcile read: the cache is behind, and what it
// holds pending may already be recorded. The reconcile stops and runs
// again once the cache has caught up; recording from the stale view
// would append those versions a second time (two managers racing did).
var errStaleService = errors.New("the service's cache is behind its records")

// staleAgainst returns errStaleService when rec names a generation above
// the one this reconcile read and the API server's service has reached
// it. A generation no service has reached is an edited annotation, which
// recordGeneration already reads as unknown.
func (r *Reconciler) staleAgainst(ctx context.Context, svc *edgev1alpha1.EdgeService, rec *edgev1alpha1.DeployRecord) error {
	if rec == nil {
		return nil
	}
	g, err := strconv.ParseInt(rec.Annotations[edgev1alpha1.AnnotationGeneration], 10, 64)
	if err != nil || g <= svc.Generation {
		return nil
	}
	live := &edgev1alpha1.EdgeService{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(svc), live); err != nil {
		if apierrors.IsNotFound(err) {
			return errStaleService // deleted meanwhile: the next reconcile finds it gone
		}
		return err
	}
	if live.UID == svc.UID && live.Generation >= g {
		return errStaleService
	}
	return nil
}

// lostCurrent says whether the record of the revision every instance runs is
// gone while the spec has not changed since the status named it.
func (r *Reconciler) lostCurrent(svc *edgev1alpha1.EdgeService, latest *edgev1alpha1.DeployRecord, running int64) bool {
	st := svc.Status
	return running > 0 && st.Revision == running && st.ObservedGeneration == svc.Generation &&
		(latest == nil || latest.Spec.Revision < running)
}

// record writes configuration c as revision rev, or finds it already
// recorded, stepping over names that something else holds.
func (r *Reconciler) record(ctx context.Context, svc *edgev1alpha1.EdgeService, c observedConfig, rev int64, hash string, nodesOf func(edgev1alpha1.EdgeServiceSpec) []edgev1alpha1.RecordNode) (*edgev1alpha1.DeployRecord, error) {
	for skips := 0; skips <= maxSlotSkips; {
		rec := r.newRecord(svc, c, rev, nodesOf(c.spec))
		err := r.Create(ctx, rec)
		if err == nil {
			// No Event: the DeployRecord is the durable account of it, and an
			// Event per revision doubled the writes of recording.
			logf.FromContext(ctx).Info("Recorded a new revision", "revision", rev, "deployRecord", rec.Name, "generation", c.generation)
			return rec, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		live := &edgev1alpha1.DeployRecord{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(rec), live); err != nil {
			if apierrors.IsNotFound(err) {
				continue // deleted in between: the name is free again
			}
			return nil, err
		}
		if !records.Of(svc, live) {
			skips++
			logf.FromContext(ctx).Info("Skipping a record name held by something else", "deployRecord", live.Name, "revision", rev)
			r.Recorder.Eventf(svc, live, corev1.EventTypeWarning, "RecordNameTaken", "Record",
				"DeployRecord %s is not this service's record of revision %d; the revision number is skipped", live.Name, rev)
			rev++
			continue
		}
		if err := r.adopt(ctx, svc, live); err != nil {
			return nil, err
		}
		if err := r.staleAgainst(ctx, svc, live); err != nil {
			return nil, err
		}
		if recordGeneration(live, svc) >= c.generation || recordHash(live) == hash {
			return live, nil // this configuration, or a later one, is recorded already
		}
		rev = live.Spec.Revision + 1 // an earlier configuration holds that number
	}
	return nil, fmt.Errorf("more than %d DeployRecord names after revision %d are held by objects that are not records of this service", maxSlotSkips, rev-maxSlotSkips)
}

// newestRecord follows the record names <service>-<n+1>, <n+2>... on the API
// server past the newest record the cache knows, and returns the last of the
// service's records found. The status's revision is where the search
// starts when the cache knows less; it is only a hint.
func (r *Reconciler) newestRecord(ctx context.Context, svc *edgev1alpha1.EdgeService, latest *edgev1alpha1.DeployRecord) (*edgev1alpha1.DeployRecord, error) {
	rev := int64(0)
	if latest != nil {
		rev = latest.Spec.Revision
	}
	if svc.Status.Revision > rev {
		found, err := r.liveRecord(ctx, svc, svc.Status.Revision)
		if err != nil {
			return nil, err
		}
		if found != nil && records.Of(svc, found) {
			latest, rev = found, found.Spec.Revision
		}
	}
	for skips := 0; skips <= maxSlotSkips; rev++ {
		live, err := r.liveRecord(ctx, svc, rev+1)
		switch {
		case err != nil:
			return nil, err
		case live == nil:
			return latest, nil
		case records.Of(svc, live):
			latest = live
		default:
			skips++ // a name something else holds: look past it
		}
	}
	return latest, nil
}

// liveRecord reads the object named for revision rev from the API server;
// nil when there is none.
func (r *Reconciler) liveRecord(ctx context.Context, svc *edgev1alpha1.EdgeService, rev int64) (*edgev1alpha1.DeployRecord, error) {
	live := &edgev1alpha1.DeployRecord{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: names.DeployRecord(svc.Name, rev)}, live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if records.Of(svc, live) {
		if err := r.adopt(ctx, svc, live); err != nil {
			return nil, err
		}
	}
	return live, nil
}

func (r *Reconciler) newRecord(svc *edgev1alpha1.EdgeService, c observedConfig, rev int64, nodes []edgev1alpha1.RecordNode) *edgev1alpha1.DeployRecord {
	spec := c.spec.DeploySpec
	spec.Image.PullPolicy = spec.Image.EffectivePullPolicy()
	rec := &edgev1alpha1.DeployRecord{
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.DeployRecord(svc.Name, rev),
			Namespace: svc.Namespace,
			Labels:    map[string]string{edgev1alpha1.LabelServiceUID: string(svc.UID)},
			Annotations: map[string]string{
				edgev1alpha1.AnnotationGeneration: strconv.FormatInt(c.generation, 10),
			},
		},
		Spec: edgev1alpha1.DeployRecordSpec{
			ServiceName: svc.Name,
			Revision:    rev,
			DeploySpec:  spec,
		},
	}
	rec.Spec.Nodes, rec.Spec.NodesOmitted = CapRecordNodes(nodes)
	// The scheme always knows both kinds, so this cannot fail.
	_ = controllerutil.SetControllerReference(svc, rec, r.Scheme())
	return rec
}

// maxRecordNodeBytes bounds the JSON of a record's nodes: beside the
// largest configuration the CRD accepts (256 variables of 4 KiB), a
// record stays under what etcd stores in one object (1.5 MiB).
const maxRecordNodeBytes = 256 << 10

// CapRecordNodes keeps the first of a record's nodes (sorted by name)
// that fit in maxRecordNodeBytes, and counts the rest. Exported for the
// envtest suite, which checks a record against it.
func CapRecordNodes(nodes []edgev1alpha1.RecordNode) ([]edgev1alpha1.RecordNode, int32) {
	size := 0
	for i, n := range nodes {
		// {"nodeId":"","nodeName":"","address":""}, and the values
		size += 41 + len(n.NodeID) + len(n.NodeName) + len(n.Address)
		if size > maxRecordNodeBytes {
			return nodes[:i], int32(len(nodes) - i)
		}
	}
	return nodes, 0
}

// pruneRecords deletes the oldest records beyond revisionHistoryLimit,
// never one of the revisions in keep: the current one, those instances
// still run while a rollout moves in waves, and the last one every
// instance ran (autoRollback returns to it).
func (r *Reconciler) pruneRecords(ctx context.Context, svc *edgev1alpha1.EdgeService, records []edgev1alpha1.DeployRecord, keep map[int64]bool) error {
	limit := 10
	if svc.Spec.RevisionHistoryLimit != nil {
		limit = int(*svc.Spec.RevisionHistoryLimit)
	}
	excess := len(records) - limit
	for i := 0; i < len(records) && excess > 0; i++ {
		rec := &records[i]
		if keep[rec.Spec.Revision] {
			continue
		}
		if err := r.Delete(ctx, rec, client.Preconditions{UID: &rec.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
		excess--
	}
	return nil
}
