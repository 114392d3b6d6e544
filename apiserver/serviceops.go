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

package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
	"github.com/edgeplane/edgeplane/internal/shared/records"
)

// The facade's service operations (not in the contract): a list of
// services, and a rollback, a scale or an image version, and a service
// made from a template, each written as kubectl edge writes it.
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgeservices,verbs=create;patch,namespace=default

// FieldManager is the field manager of the facade's writes to services.
const FieldManager = "edgeplane-facade"

// serviceItem is an item of GET /api/v1/service and the answer of the
// writes to a service.
type serviceItem struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Path         string `json:"path"`
	Policy       string `json:"policy"`
	Image        string `json:"image"`
	ImageName    string `json:"imageName"`
	ImageVersion string `json:"imageVersion"`
	ImageOS      string `json:"imageOS"`
	// Factor is the instances the spec asks for: a dynamic service's
	// factor, a static one's node count. Total follows it once the
	// manager has read the spec.
	Factor           int32  `json:"factor"`
	Strategy         string `json:"strategy"`
	Paused           bool   `json:"paused"`
	Revision         int64  `json:"revision"`
	DeployedRevision int64  `json:"deployedRevision"`
	Total            int32  `json:"total"`
	Ready            int32  `json:"ready"`
	Updated          int32  `json:"updated"`
	Failed           int32  `json:"failed"`
	// Health is ready, progressing, paused, stalled or deleting, from the
	// service's conditions; Reason and Message say why.
	Health      string `json:"health"`
	Reason      string `json:"reason"`
	Message     string `json:"message"`
	CreatedTime string `json:"createdTime"`
}

func (s *Server) serviceItem(svc *edgev1alpha1.EdgeService) serviceItem {
	ref, _ := imageref.Parse(string(svc.Spec.Image.Ref)) // the schema validated it
	st := &svc.Status
	item := serviceItem{
		ID: string(svc.UID), Name: svc.Name, Path: string(svc.Spec.Path), Policy: string(svc.Spec.Policy),
		Image: string(svc.Spec.Image.Ref), ImageName: ref.Name, ImageVersion: ref.Tag, ImageOS: ref.OS,
		Strategy: string(svc.Spec.Strategy.Type), Paused: svc.Spec.Paused,
		Revision: st.Revision, DeployedRevision: st.DeployedRevision,
		Total: st.Replicas, Ready: st.ReadyReplicas, Updated: st.UpdatedReplicas, Failed: st.FailedReplicas,
		CreatedTime: s.formatTime(svc.CreationTimestamp.Time),
	}
	if f := svc.Spec.Factor; f != nil && svc.Spec.Policy == edgev1alpha1.PolicyDynamic {
		item.Factor = *f
	} else {
		item.Factor = int32(len(svc.Spec.Nodes))
	}
	if item.Policy == "" {
		item.Policy = string(edgev1alpha1.PolicyStatic)
	}
	if item.Strategy == "" {
		item.Strategy = string(edgev1alpha1.StrategyAllAtOnce)
	}
	item.Health, item.Reason, item.Message = health(svc)
	return item
}

// health sums a service's conditions up in one word, with the reason and
// message of the condition that says it.
func health(svc *edgev1alpha1.EdgeService) (string, string, string) {
	find := func(typ string) *metav1.Condition {
		c := meta.FindStatusCondition(svc.Status.Conditions, typ)
		if c != nil && c.ObservedGeneration < svc.Generation {
			return nil // of an older spec: not yet read
		}
		return c
	}
	switch {
	case svc.DeletionTimestamp != nil:
		return "deleting", edgev1alpha1.ReasonDeleting, "The service is being deleted."
	case svc.Status.ObservedGeneration < svc.Generation:
		// Not read yet, or a healthy rollout's progress held (--status-hold).
		return "progressing", "", "The manager has not yet written the status of the latest change."
	}
	if c := find(edgev1alpha1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		return "stalled", c.Reason, c.Message
	}
	if c := find(edgev1alpha1.ConditionProgressing); c != nil && c.Reason == edgev1alpha1.ReasonRolloutPaused {
		return "paused", c.Reason, c.Message
	}
	if c := find(edgev1alpha1.ConditionReady); c != nil {
		if c.Status == metav1.ConditionTrue {
			return "ready", c.Reason, c.Message
		}
		return "progressing", c.Reason, c.Message
	}
	return "progressing", "", ""
}

// listServices serves GET /api/v1/service: the facade namespace's
// services by creation time then name, filtered by a case-insensitive
// substring of the name, as the node list is.
func (s *Server) listServices(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return nil, err
	}
	names, total := s.services.list(q, p)
	out := pageOf[serviceItem]{List: make([]serviceItem, 0, len(names)), Total: total, PageNum: p.num, PageSize: p.size}
	for _, name := range names {
		// The cached object itself, read only; the order and the index
		// follow the informer each on its own: one may be a moment behind.
		svc, ok := s.serviceIndex.object(s.opts.Namespace, name)
		if !ok {
			continue // deleted since the order was read
		}
		out.List = append(out.List, s.serviceItem(svc))
	}
	return out, nil
}

// rollbackBody is the body of POST /api/v1/service/{id}/rollback.
type rollbackBody struct {
	RecordID *string `json:"recordId"`
}

// rollbackResult says what a rollback wrote.
type rollbackResult struct {
	Service serviceItem `json:"service"`
	// ToRevision is the record's revision, whose configuration the
	// service now has; the manager records it as a new revision.
	ToRevision int64 `json:"toRevision"`
	// Changed is false when the service already had that configuration:
	// nothing was written.
	Changed bool `json:"changed"`
}

// rollbackService serves POST /api/v1/service/{id}/rollback: it writes
// the configuration of one of the service's records back into its spec,
// as kubectl edge rollout undo --to-revision does.
func (s *Server) rollbackService(r *http.Request) (any, error) {
	var body rollbackBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.RecordID == nil || strings.TrimSpace(*body.RecordID) == "" {
		return nil, badField("recordId", "is required: the id of the record to return to")
	}
	svc, err := s.liveService(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	recs := &edgev1alpha1.DeployRecordList{}
	if err := s.lookup(r.Context(), recs, index.ByUID, *body.RecordID, true); err != nil {
		return nil, err
	}
	if len(recs.Items) == 0 {
		return nil, notFound("No deployment record has the id %q.", *body.RecordID)
	}
	rec := &recs.Items[0]
	if label := rec.Labels[edgev1alpha1.LabelServiceUID]; !records.Of(svc, rec) || (label != "" && label != string(svc.UID)) {
		return nil, errorf(http.StatusConflict, "Record %s (revision %d of service %s) is not a record of service %s; nothing was written.",
			rec.Name, rec.Spec.Revision, rec.Spec.ServiceName, svc.Name)
	}
	changed, err := s.writeSpec(r.Context(), svc, func(spec *edgev1alpha1.EdgeServiceSpec) (bool, *apiError) {
		changed, err := records.Restore(spec, rec)
		if err != nil {
			return false, errorf(http.StatusConflict, "Record %s cannot be restored: %v; nothing was written.", rec.Name, err)
		}
		return changed, nil
	})
	if err != nil {
		return nil, err
	}
	if changed {
		s.log.Info("Rolled back a service", "service", svc.Name, "toRevision", rec.Spec.Revision)
	}
	return rollbackResult{Service: s.serviceItem(svc), ToRevision: rec.Spec.Revision, Changed: changed}, nil
}

// serviceChange is the body of PATCH /api/v1/service/{id}: the fields
// given change, the others stay.
type serviceChange struct {
	Factor       *int32  `json:"factor"`
	ImageVersion *string `json:"imageVersion"`
}

// patchService serves PATCH /api/v1/service/{id}: a dynamic service's
// factor and any service's image version (the tag of its name@tag#os).
func (s *Server) patchService(r *http.Request) (any, error) {
	var body serviceChange
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Factor == nil && body.ImageVersion == nil {
		return nil, badFields(map[string]string{"factor": "give factor, imageVersion or both", "imageVersion": "give factor, imageVersion or both"})
	}
	svc, err := s.liveService(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	var ref edgev1alpha1.ImageRef
	if f := body.Factor; f != nil {
		switch {
		case svc.Spec.Policy != edgev1alpha1.PolicyDynamic:
			fields["factor"] = "a static service runs one instance on each of its nodes; only a dynamic service has a factor"
		case *f < 1 || *f > edgev1alpha1.MaxFactor:
			fields["factor"] = fmt.Sprintf("must be between 1 and %d", edgev1alpha1.MaxFactor)
		}
	}
	if v := body.ImageVersion; v != nil {
		cur, _ := imageref.Parse(string(svc.Spec.Image.Ref)) // the schema validated it
		next := cur.Name + "@" + *v + "#" + cur.OS
		if _, err := imageref.Parse(next); err != nil || *v == "" || strings.ContainsAny(*v, "@#") {
			fields["imageVersion"] = fmt.Sprintf("%q is no image version: give a tag such as 1.4.2", *v)
		}
		ref = edgev1alpha1.ImageRef(next)
	}
	if len(fields) > 0 {
		return nil, badFields(fields)
	}
	_, err = s.writeSpec(r.Context(), svc, func(spec *edgev1alpha1.EdgeServiceSpec) (bool, *apiError) {
		changed := false
		if f := body.Factor; f != nil && (spec.Factor == nil || *spec.Factor != *f) {
			spec.Factor, changed = f, true
		}
		if body.ImageVersion != nil && spec.Image.Ref != ref {
			spec.Image.Ref, changed = ref, true
		}
		return changed, nil
	})
	if err != nil {
		return nil, err
	}
	return s.serviceItem(svc), nil
}

// newServiceBody is the body of POST /api/v1/service: a service made
// from a template, static on nodes or dynamic with factor instances.
type newServiceBody struct {
	TemplateID *string  `json:"templateId"`
	Name       *string  `json:"name"`
	Nodes      []string `json:"nodes"`
	Factor     *int32   `json:"factor"`
}

// createService serves POST /api/v1/service, as kubectl edge deploy
// --from-template does: the template's image and defaults, in its folder.
func (s *Server) createService(r *http.Request) (any, error) {
	var body newServiceBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	fields := map[string]string{}
	if body.TemplateID == nil || strings.TrimSpace(*body.TemplateID) == "" {
		fields["templateId"] = "is required: the id of the template to deploy"
	}
	switch {
	case len(body.Nodes) > 0 && body.Factor != nil:
		fields["factor"] = "give nodes (a static service) or factor (a dynamic one), not both"
	case len(body.Nodes) == 0 && body.Factor == nil:
		fields["nodes"] = "give nodes (a static service on those nodes) or factor (a dynamic one of that many instances)"
	case body.Factor != nil && (*body.Factor < 1 || *body.Factor > edgev1alpha1.MaxFactor):
		fields["factor"] = fmt.Sprintf("must be between 1 and %d", edgev1alpha1.MaxFactor)
	}
	for i, n := range body.Nodes {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			fields[fmt.Sprintf("nodes[%d]", i)] = strings.Join(errs, "; ")
		}
	}
	if len(fields) > 0 {
		return nil, badFields(fields)
	}
	list := &edgev1alpha1.ProvisionTemplateList{}
	if err := s.lookup(r.Context(), list, index.ByUID, *body.TemplateID, true); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, notFound("No template has the id %q.", *body.TemplateID)
	}
	t := &list.Items[0]
	if t.Spec.Type != edgev1alpha1.TypeTemplate {
		return nil, badField("templateId", fmt.Sprintf("%s is a %s, not a template", t.Spec.Name, t.Spec.Type))
	}
	name := t.Spec.Name
	if body.Name != nil {
		name = *body.Name
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, badField("name", fmt.Sprintf("%q cannot name a service: %s", name, strings.Join(errs, "; ")))
	}
	svc := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: name}, Spec: t.ServiceSpec(body.Nodes, body.Factor)}
	if err := s.writer.Create(r.Context(), svc, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, &apiError{status: http.StatusConflict, msg: fmt.Sprintf("A service named %s exists; give another name.", name),
				fields: map[string]string{"name": "is taken"}}
		}
		return nil, fromKube(err)
	}
	s.log.Info("Created a service from a template", "service", name, "template", t.Name)
	return s.serviceItem(svc), nil
}

// liveService reads a service of the facade's namespace by id from the
// API server, not the cache: a write is computed from, and locked to,
// the version it reads.
func (s *Server) liveService(ctx context.Context, id string) (*edgev1alpha1.EdgeService, error) {
	var name string
	for _, svc := range s.serviceIndex.get(id) {
		name = svc.Name
	}
	if name == "" {
		return nil, notFound("No service has the id %q.", id)
	}
	svc := &edgev1alpha1.EdgeService{}
	if err := s.live.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound("No service has the id %q.", id)
		}
		return nil, fromKube(err)
	}
	if string(svc.UID) != id {
		return nil, notFound("No service has the id %q.", id)
	}
	if svc.DeletionTimestamp != nil {
		return nil, errorf(http.StatusConflict, "Service %s is being deleted; nothing was written.", svc.Name)
	}
	return svc, nil
}

// writeSpec changes svc's spec with change and, when it changed, writes
// the difference: a merge patch carrying the resourceVersion read, under
// the facade's field manager, as kubectl edge writes. A change made
// meanwhile is a 409, never overwritten; svc holds the result.
func (s *Server) writeSpec(ctx context.Context, svc *edgev1alpha1.EdgeService, change func(*edgev1alpha1.EdgeServiceSpec) (bool, *apiError)) (bool, error) {
	patch := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed, aerr := change(&svc.Spec)
	if aerr != nil {
		return false, aerr
	}
	if !changed {
		return false, nil
	}
	if err := s.writer.Patch(ctx, svc, patch, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) {
			return false, errorf(http.StatusConflict, "Service %s changed while this was written; nothing was written. Read it again and retry.", svc.Name)
		}
		return false, fromKube(err)
	}
	return true, nil
}
