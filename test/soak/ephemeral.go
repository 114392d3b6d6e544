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
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// ephemeralRoot is the folder of the short-lived services' folders.
const ephemeralRoot = "/soak-eph"

// ephemeral is a short-lived service with the folder and template it was
// made from, by their ids (UIDs).
type ephemeral struct {
	name, path                string
	folder, template, service string
}

// ephemerals creates a short-lived service every EphemeralEvery and
// deletes the oldest past EphemeralKeep, until ctx ends.
func (r *run) ephemerals(ctx context.Context) {
	tick := time.NewTicker(r.cfg.EphemeralEvery)
	defer tick.Stop()
	var alive []ephemeral
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		e, err := r.createEphemeral(ctx, n)
		if err != nil {
			if ctx.Err() == nil {
				r.churnErr("creating a short-lived service", err)
			}
			continue
		}
		alive = append(alive, e)
		for len(alive) > r.cfg.EphemeralKeep {
			done, err := r.deleteEphemeral(ctx, alive[0])
			if err != nil && ctx.Err() == nil {
				r.churnErr("deleting "+alive[0].name, err)
			}
			if !done {
				break // tried again at the next tick
			}
			alive = alive[1:]
		}
	}
}

// createEphemeral makes, through the facade as the console does, a
// folder, a template of one image in it, and a service of one instance
// from the template.
func (r *run) createEphemeral(ctx context.Context, n int) (ephemeral, error) {
	e := ephemeral{name: fmt.Sprintf("eph-%04d", n)}
	var folder struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	}
	if err := r.write(ctx, "POST", "/api/v1/provision-template/path-label/folder", map[string]any{"path": ephemeralRoot, "name": fmt.Sprintf("e-%04d", n)}, &folder); err != nil {
		return e, err
	}
	e.folder, e.path = folder.ID, folder.Path
	var batch struct {
		List []struct {
			ID string `json:"id"`
		} `json:"provisionTmplList"`
	}
	if err := r.write(ctx, "POST", "/api/v1/provision-template/path-label/service/batch", map[string]any{"path": e.path, "imageRefs": []string{"eph@1#linux"}}, &batch); err != nil {
		return e, err
	}
	if len(batch.List) != 1 {
		return e, fmt.Errorf("a batch of one image made %d templates", len(batch.List))
	}
	e.template = batch.List[0].ID
	r.count(func(res *Result) { res.TemplatesCreated += 2 }) // the folder and the template
	var svc struct {
		ID string `json:"id"`
	}
	// The facade finds the template in its cache, which may not hold it
	// yet: a 404 is tried again, as a person would.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := procs.WaitFor(wait, "the template in the facade's cache", 500*time.Millisecond, func() (bool, error) {
		err := r.write(ctx, "POST", "/api/v1/service", map[string]any{"templateId": e.template, "name": e.name, "factor": 1}, &svc)
		var fe *facadeError
		if errors.As(err, &fe) && fe.Status == 404 {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return e, err
	}
	e.service = svc.ID
	r.count(func(res *Result) { res.ServicesCreated++ })
	return e, nil
}

// deleteEphemeral deletes a short-lived service through the facade once
// the manager has recorded what it was given (false before: a version
// deleted before it was recorded is not a missing record), then its
// records, as the garbage collector would, and its template and folder.
func (r *run) deleteEphemeral(ctx context.Context, e ephemeral) (bool, error) {
	svc := &edgev1alpha1.EdgeService{}
	err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: e.name}, svc)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, err
	case svc.Status.ObservedGeneration != svc.Generation || svc.Status.CurrentRecord == "":
		return false, nil
	default:
		var out []struct {
			Result string  `json:"result"`
			Error  *string `json:"error"`
		}
		if err := r.write(ctx, "DELETE", "/api/v1/service/path", map[string]any{"path": e.path, "provisionIds": []string{e.service}}, &out); err != nil {
			return false, err
		}
		if len(out) != 1 || out[0].Result != "successful" {
			return false, fmt.Errorf("deleting %s answered %+v", e.path, out)
		}
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := procs.WaitFor(wait, e.name+" gone", 500*time.Millisecond, func() (bool, error) {
		err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: e.name}, &edgev1alpha1.EdgeService{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		return false, err
	}
	r.count(func(res *Result) { res.ServicesDeleted++ })
	// envtest runs no kube-controller-manager, so no garbage collector
	// deletes the records the service owned: the run does, by the label
	// the manager puts on them, or they would pile up.
	if err := r.c.DeleteAllOf(ctx, &edgev1alpha1.DeployRecord{}, client.InNamespace(namespace),
		client.MatchingLabels{edgev1alpha1.LabelServiceUID: e.service}); err != nil {
		return true, err
	}
	// The facade deletes no template: through the API, the template
	// first, then its folder, which waits for its entries.
	list := &edgev1alpha1.ProvisionTemplateList{}
	if err := r.c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return true, err
	}
	for _, uid := range []string{e.template, e.folder} {
		for i := range list.Items {
			if list.Items[i].UID == types.UID(uid) {
				if err := r.c.Delete(ctx, &list.Items[i], client.Preconditions{UID: &list.Items[i].UID}); client.IgnoreNotFound(err) != nil {
					return true, err
				}
				r.count(func(res *Result) { res.TemplatesDeleted++ })
			}
		}
	}
	return true, nil
}
