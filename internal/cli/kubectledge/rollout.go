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
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/records"
)

// FieldManager names the plugin's writes in the objects' managedFields.
const FieldManager = "kubectl-edge"

// kindName is how the plugin names a service in what it prints, as
// kubectl names objects.
const kindName = "edgeservice.edge.edgeplane.io/"

// rollout runs the rollout commands against one cluster.
type rollout struct {
	c   client.Client
	out io.Writer
	// timeout bounds the calls of a command (--request-timeout, else
	// requestTimeout).
	timeout time.Duration
}

// service reads the service and its records, oldest first: those named
// for it, holding its name and controlled by it or by nothing, as the
// manager counts them.
func (r *rollout) service(ctx context.Context, namespace, name string) (*edgev1alpha1.EdgeService, []edgev1alpha1.DeployRecord, error) {
	svc := &edgev1alpha1.EdgeService{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc); err != nil {
		return nil, nil, err
	}
	list := &edgev1alpha1.DeployRecordList{}
	if err := r.c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{edgev1alpha1.LabelServiceUID: string(svc.UID)}); err != nil {
		return nil, nil, fmt.Errorf("listing the records of %s%s: %w", kindName, name, err)
	}
	var recs []edgev1alpha1.DeployRecord
	for _, rec := range list.Items {
		if records.Of(svc, &rec) {
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(a, b edgev1alpha1.DeployRecord) int { return int(a.Spec.Revision - b.Spec.Revision) })
	return svc, recs, nil
}

// maxChangesShown bounds the CHANGE column; --revision shows them all.
const maxChangesShown = 2

// history prints the service's revisions, as kubectl rollout history
// does, with each one's image, time and what it changed; revision > 0
// prints that one in full.
func (r *rollout) history(ctx context.Context, namespace, name string, revision int64) error {
	svc, recs, err := r.service(ctx, namespace, name)
	if err != nil {
		return err
	}
	if revision > 0 {
		return r.revision(svc, recs, revision)
	}
	fmt.Fprintf(r.out, "%s%s\n", kindName, name)
	if len(recs) == 0 {
		fmt.Fprintln(r.out, "No revisions recorded yet.")
		return nil
	}
	current := currentRevision(svc, recs)
	w := tabwriter.NewWriter(r.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "REVISION\tIMAGE\tCREATED\tCHANGE")
	for i := range recs {
		rec := &recs[i]
		change, err := changeOf(recs, i)
		if err != nil {
			return err
		}
		if len(change) > maxChangesShown {
			change = append(change[:maxChangesShown], fmt.Sprintf("%d more", len(change)-maxChangesShown))
		}
		rev := strconv.FormatInt(rec.Spec.Revision, 10)
		if rec.Spec.Revision == current {
			rev += " (current)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", rev, rec.Spec.Image.Ref, rec.CreationTimestamp.UTC().Format(time.RFC3339), strings.Join(change, "; "))
	}
	return w.Flush()
}

// changeOf says what the i-th record changed from the one before it;
// the first, or one whose predecessor was pruned, says so.
func changeOf(recs []edgev1alpha1.DeployRecord, i int) ([]string, error) {
	rec := &recs[i]
	switch {
	case rec.Spec.Revision == 1:
		return []string{"created"}, nil
	case i == 0 || recs[i-1].Spec.Revision != rec.Spec.Revision-1:
		return []string{fmt.Sprintf("revision %d is no longer kept", rec.Spec.Revision-1)}, nil
	}
	return changes(records.RecordConfig(&recs[i-1]), records.RecordConfig(rec))
}

// revision prints one revision in full: its configuration and every
// change from the revision before.
func (r *rollout) revision(svc *edgev1alpha1.EdgeService, recs []edgev1alpha1.DeployRecord, revision int64) error {
	i := slices.IndexFunc(recs, func(rec edgev1alpha1.DeployRecord) bool { return rec.Spec.Revision == revision })
	if i < 0 {
		return notKept(svc.Name, revision, recs)
	}
	rec := &recs[i]
	change, err := changeOf(recs, i)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(records.RecordConfig(rec))
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "%s%s with revision #%d\n", kindName, svc.Name, revision)
	fmt.Fprintf(r.out, "Record:   %s\nCreated:  %s\n", rec.Name, rec.CreationTimestamp.UTC().Format(time.RFC3339))
	if rec.Spec.NodesOmitted > 0 {
		fmt.Fprintf(r.out, "Nodes:    %d listed, %d more omitted from the record\n", len(rec.Spec.Nodes), rec.Spec.NodesOmitted)
	}
	fmt.Fprintln(r.out, "Changes:")
	for _, c := range change {
		fmt.Fprintf(r.out, "  %s\n", c)
	}
	fmt.Fprintln(r.out, "Configuration:")
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		fmt.Fprintf(r.out, "  %s\n", line)
	}
	return nil
}

// notKept says a revision is not in the service's history, and which are.
func notKept(service string, revision int64, recs []edgev1alpha1.DeployRecord) error {
	kept := make([]string, 0, len(recs))
	for _, rec := range recs {
		kept = append(kept, strconv.FormatInt(rec.Spec.Revision, 10))
	}
	if len(kept) == 0 {
		return fmt.Errorf("revision %d of %s%s is not kept: the service has no records yet", revision, kindName, service)
	}
	return fmt.Errorf("revision %d of %s%s is not kept; kept: %s", revision, kindName, service, strings.Join(kept, ", "))
}

// undo writes the configuration of a record back into the service's spec:
// the revision before the current one, or toRevision. The manager then
// records it as a new revision, as it does any change.
func (r *rollout) undo(ctx context.Context, namespace, name string, toRevision int64) error {
	svc, recs, err := r.service(ctx, namespace, name)
	if err != nil {
		return err
	}
	target := toRevision
	if target == 0 {
		current := currentRevision(svc, recs)
		for _, rec := range recs {
			if rec.Spec.Revision < current {
				target = rec.Spec.Revision
			}
		}
		if target == 0 {
			return fmt.Errorf("%s%s has no revision before its current one (%d) to return to", kindName, name, current)
		}
	}
	i := slices.IndexFunc(recs, func(rec edgev1alpha1.DeployRecord) bool { return rec.Spec.Revision == target })
	if i < 0 {
		return notKept(name, target, recs)
	}
	// A merge patch, not an apply: the fields the record lacks must go,
	// and an apply cannot remove fields another manager (kubectl, a
	// GitOps tool) owns. The resourceVersion in the patch makes an edit
	// made meanwhile a conflict rather than something overwritten.
	patch := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed, err := records.Restore(&svc.Spec, &recs[i])
	if err != nil {
		return fmt.Errorf("%s%s: %w", kindName, name, err)
	}
	if !changed {
		fmt.Fprintf(r.out, "%s%s skipped rollback (current configuration already matches revision %d)\n", kindName, name, target)
		return nil
	}
	if err := r.c.Patch(ctx, svc, patch, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("%s%s changed while rolling back; run the command again: %w", kindName, name, err)
		}
		return err
	}
	fmt.Fprintf(r.out, "%s%s rolled back to revision %d\n", kindName, name, target)
	return nil
}

// setPaused pauses or resumes a service's rollout, as kubectl rollout
// pause and resume do a Deployment's: a merge patch of spec.paused alone,
// under kubectl edge's field manager; an error when there is nothing to
// do.
func (r *rollout) setPaused(ctx context.Context, namespace, name string, paused bool) error {
	svc := &edgev1alpha1.EdgeService{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc); err != nil {
		return err
	}
	if svc.Spec.Paused == paused {
		if paused {
			return fmt.Errorf("%s%s is already paused", kindName, name)
		}
		return fmt.Errorf("%s%s is not paused", kindName, name)
	}
	raw := fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)
	if err := r.c.Patch(ctx, svc, client.RawPatch(types.MergePatchType, []byte(raw)), client.FieldOwner(FieldManager)); err != nil {
		return err
	}
	if paused {
		fmt.Fprintf(r.out, "%s%s paused\n", kindName, name)
	} else {
		fmt.Fprintf(r.out, "%s%s resumed\n", kindName, name)
	}
	return nil
}

// currentRevision is the revision the service is at: its newest record's,
// which the manager writes before the status, so a change whose status
// is not written yet (or held, --status-hold) counts; else the status's.
func currentRevision(svc *edgev1alpha1.EdgeService, recs []edgev1alpha1.DeployRecord) int64 {
	current := svc.Status.Revision
	for _, rec := range recs {
		current = max(current, rec.Spec.Revision)
	}
	return current
}
