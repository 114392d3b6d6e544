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
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgeservices,verbs=delete,namespace=default

// pathBody is the body of the delete-by-path request.
type pathBody struct {
	Path *string `json:"path"`
	// ProvisionIDs, when given, are the services the client expects under
	// the path (as GET /api/v1/service/path listed them): if the services
	// there are not exactly these, nothing is deleted. Not in the
	// contract; without it the request is the contract's.
	ProvisionIDs *[]string `json:"provisionIds"`
}

// pathService is an item of GET /api/v1/service/path: a service the
// delete of that path would remove.
type pathService struct {
	ProvisionID string `json:"provisionId"`
	Name        string `json:"name"`
	Path        string `json:"path"`
	Terminating bool   `json:"terminating"`
}

// deletion is one item of the delete-by-path response.
type deletion struct {
	ProvisionID   string  `json:"provisionId"`
	Result        string  `json:"result"`
	TransactionID string  `json:"transactionId"`
	Error         *string `json:"error"`
}

// deleteServicesByPath serves DELETE /api/v1/service/path: it force-deletes
// every EdgeService at or below the path, without waiting for agents.
func (s *Server) deleteServicesByPath(r *http.Request) (any, error) {
	p, expect, aerr := parseDeletePath(r)
	if aerr != nil {
		return nil, aerr
	}
	list, err := s.servicesUnder(r.Context(), p)
	if err != nil {
		return nil, err
	}
	if expect != nil {
		if err := sameServices(p, list.Items, *expect); err != nil {
			return nil, err
		}
	}
	tx := uuid.NewString()
	out := make([]deletion, 0, len(list.Items))
	for i := range list.Items {
		svc := &list.Items[i]
		d := deletion{ProvisionID: string(svc.UID), Result: "successful", TransactionID: tx}
		if err := s.forceDelete(r.Context(), svc, p); err != nil {
			msg := fromKube(err).msg
			if errors.Is(err, errMoved) {
				msg = err.Error()
			}
			d.Result, d.Error = "failed", &msg
		}
		out = append(out, d)
	}
	s.log.Info("Force-deleted services by path", "path", p, "transactionId", tx, "services", len(out))
	return out, nil
}

// listServicesByPath serves GET /api/v1/service/path: the services that
// DELETE /api/v1/service/path would remove for the same path, in the
// order it reports them. Not in the contract: a client shows it before it
// deletes, and sends the ids back as provisionIds.
func (s *Server) listServicesByPath(r *http.Request) (any, error) {
	q := r.URL.Query()
	pg, aerr := parsePage(q)
	if aerr != nil {
		return nil, aerr
	}
	p, aerr := queryPath(q, true)
	if aerr != nil {
		return nil, aerr
	}
	list, err := s.servicesUnder(r.Context(), p)
	if err != nil {
		return nil, err
	}
	out := make([]pathService, 0, len(list.Items))
	for i := range list.Items {
		svc := &list.Items[i]
		out = append(out, pathService{ProvisionID: string(svc.UID), Name: svc.Name, Path: string(svc.Spec.Path), Terminating: svc.DeletionTimestamp != nil})
	}
	return paginate(out, pg), nil
}

// servicesUnder lists the services at or below a path from the cache, by
// name: what a delete of the path removes.
func (s *Server) servicesUnder(ctx context.Context, p string) (*edgev1alpha1.EdgeServiceList, error) {
	list := &edgev1alpha1.EdgeServiceList{}
	if err := s.cache.List(ctx, list, client.InNamespace(s.opts.Namespace), client.MatchingFields{index.ServiceByPath: p}); err != nil {
		return nil, fromKube(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list, nil
}

// sameServices is a 409 unless the services under p are exactly the
// expected ids: what a person confirmed is what goes, or nothing does.
func sameServices(p string, found []edgev1alpha1.EdgeService, expect []string) error {
	given := map[string]bool{}
	for _, id := range expect {
		given[id] = true
	}
	var added []string
	for i := range found {
		id := string(found[i].UID)
		if !given[id] {
			added = append(added, found[i].Name)
		}
		delete(given, id)
	}
	if len(added) == 0 && len(given) == 0 {
		return nil
	}
	msg := fmt.Sprintf("The services under %s are not the ones given; nothing was deleted. List them again and confirm", p)
	detail := fmt.Sprintf("%d under the path not given, %d given no longer under it", len(added), len(given))
	if len(added) > 0 {
		msg += fmt.Sprintf(" (not given: %s)", strings.Join(added[:min(len(added), 10)], ", "))
	}
	return &apiError{status: http.StatusConflict, msg: msg + ".", fields: map[string]string{"provisionIds": detail}}
}

// parseDeletePath reads the path of a delete-by-path request and the
// services the client expects there, if it says.
func parseDeletePath(r *http.Request) (string, *[]string, *apiError) {
	var body pathBody
	if err := decodeBody(r, &body); err != nil {
		return "", nil, err
	}
	fields := map[string]string{}
	p := checkPath(body.Path, fields)
	if body.ProvisionIDs != nil {
		// The body's 1 MiB bounds how many.
		for i, id := range *body.ProvisionIDs {
			if strings.TrimSpace(id) == "" {
				fields[fmt.Sprintf("provisionIds[%d]", i)] = "must not be empty"
			}
		}
	}
	if len(fields) > 0 {
		return "", nil, badFields(fields)
	}
	return p, body.ProvisionIDs, nil
}

// errMoved says a service left the path between the cache's answer and the
// delete.
var errMoved = errors.New("moved")

// forceDelete deletes a service and removes edgeplane's finalizer, so that
// it goes at once even when no agent reports its containers gone. Other
// finalizers are left to their owners. The delete is preconditioned on the
// resourceVersion the decision was made on: a service changed since (for
// example moved out of the path while the request ran) is read again and
// deleted only if it is still at or below path.
func (s *Server) forceDelete(ctx context.Context, svc *edgev1alpha1.EdgeService, path string) error {
	target := svc
	for attempt := 0; ; attempt++ {
		rv := target.ResourceVersion
		err := s.writer.Delete(ctx, target, client.Preconditions{UID: &svc.UID, ResourceVersion: &rv})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 4 {
			if err != nil {
				return err
			}
			break
		}
		live := &edgev1alpha1.EdgeService{}
		if err := s.live.Get(ctx, client.ObjectKeyFromObject(svc), live); err != nil {
			return client.IgnoreNotFound(err)
		}
		if live.UID != svc.UID {
			return nil // deleted and created again: not the service that matched
		}
		if !slices.Contains(paths.Ancestors(string(live.Spec.Path)), path) {
			return fmt.Errorf("%w: service %s moved to %s while the request ran, so it was not deleted", errMoved, live.Name, live.Spec.Path)
		}
		target = live
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &edgev1alpha1.EdgeService{}
		if err := s.live.Get(ctx, client.ObjectKeyFromObject(svc), live); err != nil {
			return client.IgnoreNotFound(err)
		}
		if live.UID != svc.UID || !controllerutil.ContainsFinalizer(live, edgev1alpha1.FinalizerContainers) {
			return nil
		}
		patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.RemoveFinalizer(live, edgev1alpha1.FinalizerContainers)
		return client.IgnoreNotFound(s.writer.Patch(ctx, live, patch))
	})
}
