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

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
	"github.com/edgeplane/edgeplane/internal/paths"
)

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgeservices,verbs=delete,namespace=default

// pathBody is the body of the delete-by-path request.
type pathBody struct {
	Path *string `json:"path"`
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
	p, aerr := parseDeletePath(r)
	if aerr != nil {
		return nil, aerr
	}
	list := &edgev1alpha1.EdgeServiceList{}
	if err := s.cache.List(r.Context(), list, client.InNamespace(s.opts.Namespace), client.MatchingFields{index.ServiceByPath: p}); err != nil {
		return nil, fromKube(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
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

// parseDeletePath reads the path of a delete-by-path request.
func parseDeletePath(r *http.Request) (string, *apiError) {
	var body pathBody
	if err := decodeBody(r, &body); err != nil {
		return "", err
	}
	fields := map[string]string{}
	p := checkPath(body.Path, fields)
	if len(fields) > 0 {
		return "", badFields(fields)
	}
	return p, nil
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
