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
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=provisiontemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=provisiontemplates,verbs=create;delete,namespace=default

// maxRefs bounds the image refs of one batch.
const maxRefs = 1000

type folderBody struct {
	Name *string `json:"name"`
	Path *string `json:"path"`
}

type folderResult struct {
	ID   string `json:"id"`
	Path string `json:"path"`
}

type batchBody struct {
	ImageRefs []string `json:"imageRefs"`
	Path      *string  `json:"path"`
}

type templateRow struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type batchResult struct {
	ProvisionTmplList []templateRow `json:"provisionTmplList"`
}

// createFolder serves POST /api/v1/provision-template/path-label/folder.
// Missing parents are created too; an existing folder is returned as is.
func (s *Server) createFolder(r *http.Request) (any, error) {
	full, err := parseFolder(r)
	if err != nil {
		return nil, err
	}
	var folder *edgev1alpha1.ProvisionTemplate
	for _, p := range paths.Ancestors(full)[1:] {
		dir, name := paths.Split(p)
		var err error
		if folder, err = s.ensureFolder(r.Context(), dir, name); err != nil {
			return nil, err
		}
	}
	return folderResult{ID: string(folder.UID), Path: full}, nil
}

// parseFolder reads and checks a folder request; it returns the full path
// of the folder to create.
func parseFolder(r *http.Request) (string, *apiError) {
	var body folderBody
	if err := decodeBody(r, &body); err != nil {
		return "", err
	}
	fields := map[string]string{}
	parent := checkPath(body.Path, fields)
	if body.Name == nil {
		fields["name"] = "is required"
	} else if err := paths.CheckName(*body.Name); err != nil {
		fields["name"] = err.Error()
	}
	if len(fields) > 0 {
		return "", badFields(fields)
	}
	full := paths.Join(parent, *body.Name)
	if len(full) > paths.MaxLength {
		return "", badField("name", fmt.Sprintf("makes a path longer than %d characters", paths.MaxLength))
	}
	return full, nil
}

// checkPath reads a required path field into canonical form.
func checkPath(p *string, fields map[string]string) string {
	if p == nil {
		fields["path"] = "is required"
		return ""
	}
	out, err := paths.Normalize(*p)
	if err != nil {
		fields["path"] = err.Error()
	}
	return out
}

// ensureFolder creates the folder name in parent, or returns it when it
// exists. Its object name comes from (parent, name), so retries and
// racing replicas meet on one object.
func (s *Server) ensureFolder(ctx context.Context, parent, name string) (*edgev1alpha1.ProvisionTemplate, error) {
	f := &edgev1alpha1.ProvisionTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: names.Template(parent, name)},
		Spec:       edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeFolder, Name: name, Path: edgev1alpha1.FolderPath(parent)},
	}
	err := s.writer.Create(ctx, f)
	if err == nil {
		return f, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fromKube(err)
	}
	live := &edgev1alpha1.ProvisionTemplate{}
	if err := s.live.Get(ctx, client.ObjectKeyFromObject(f), live); err != nil {
		return nil, fromKube(err)
	}
	if live.Spec.Type != edgev1alpha1.TypeFolder || live.Spec.Name != name || string(live.Spec.Path) != parent {
		return nil, errorf(http.StatusConflict, "A template named %q already exists in %s.", name, parent)
	}
	return live, nil
}

// createTemplates serves POST /api/v1/provision-template/path-label/service/batch:
// every ref is checked first, then every template is created, or none.
func (s *Server) createTemplates(r *http.Request) (any, error) {
	b, aerr := parseBatch(r, s.opts.Namespace)
	if aerr != nil {
		return nil, aerr
	}
	folder, templates := b.folder, b.templates
	if err := s.folderExists(r.Context(), folder); err != nil {
		return nil, err
	}
	if err := s.checkFree(r.Context(), folder, b.index); err != nil {
		return nil, err
	}
	rows := make([]templateRow, 0, len(templates))
	for i, t := range templates {
		if err := s.writer.Create(r.Context(), t); err != nil {
			s.rollback(templates[:i])
			if apierrors.IsAlreadyExists(err) {
				return nil, &apiError{status: http.StatusConflict,
					msg:    fmt.Sprintf("These names already exist in %s; nothing was created: %s.", folder, t.Spec.Name),
					fields: map[string]string{fmt.Sprintf("imageRefs[%d]", b.index[t.Spec.Name]): fmt.Sprintf("an entry named %q already exists in %s", t.Spec.Name, folder)}}
			}
			return nil, fromKube(err)
		}
		rows = append(rows, templateRow{ID: string(t.UID), Name: t.Spec.Name})
	}
	return batchResult{ProvisionTmplList: rows}, nil
}

// batch is a checked batch request: the folder, the templates to create
// and the index of each template name in imageRefs.
type batch struct {
	folder    string
	templates []*edgev1alpha1.ProvisionTemplate
	index     map[string]int
}

// parseBatch reads a batch request and checks every ref.
func parseBatch(r *http.Request, namespace string) (*batch, *apiError) {
	var body batchBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	fields := map[string]string{}
	folder := checkPath(body.Path, fields)
	switch {
	case body.ImageRefs == nil:
		fields["imageRefs"] = "is required"
	case len(body.ImageRefs) == 0:
		fields["imageRefs"] = "must hold at least one image ref"
	case len(body.ImageRefs) > maxRefs:
		fields["imageRefs"] = fmt.Sprintf("must hold at most %d image refs", maxRefs)
	}
	templates := make([]*edgev1alpha1.ProvisionTemplate, 0, len(body.ImageRefs))
	firstOf := map[string]int{}
	for i, raw := range body.ImageRefs {
		field := fmt.Sprintf("imageRefs[%d]", i)
		ref, err := imageref.Parse(raw)
		if err != nil {
			fields[field] = err.Error()
			continue
		}
		name := templateName(ref)
		if j, dup := firstOf[name]; dup {
			fields[field] = fmt.Sprintf("makes a template named %q, as imageRefs[%d] does", name, j)
			continue
		}
		firstOf[name] = i
		templates = append(templates, &edgev1alpha1.ProvisionTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: names.Template(folder, name)},
			Spec: edgev1alpha1.ProvisionTemplateSpec{
				Type: edgev1alpha1.TypeTemplate, Name: name, Path: edgev1alpha1.FolderPath(folder), ImageRef: edgev1alpha1.ImageRef(raw),
			},
		})
	}
	if len(fields) > 0 {
		return nil, badFields(fields)
	}
	return &batch{folder: folder, templates: templates, index: firstOf}, nil
}

// templateName is the name a template of an image gets: the image name,
// with '/' (the path separator of the tree) written as '-'.
func templateName(ref imageref.Ref) string {
	return strings.ReplaceAll(ref.Name, "/", "-")
}

// folderExists reads the folder from the API server, not the cache, so
// that a folder created a moment ago is found.
func (s *Server) folderExists(ctx context.Context, folder string) error {
	if folder == "/" {
		return nil
	}
	parent, name := paths.Split(folder)
	f := &edgev1alpha1.ProvisionTemplate{}
	err := s.live.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: names.Template(parent, name)}, f)
	if apierrors.IsNotFound(err) || err == nil && (f.Spec.Type != edgev1alpha1.TypeFolder || f.DeletionTimestamp != nil) {
		return notFound("No folder %s.", folder)
	}
	if err != nil {
		return fromKube(err)
	}
	return nil
}

// checkFree refuses names that are taken in the folder, listing them.
func (s *Server) checkFree(ctx context.Context, folder string, names map[string]int) error {
	list := &edgev1alpha1.ProvisionTemplateList{}
	if err := s.lookup(ctx, list, index.TemplateByParent, index.Key(s.opts.Namespace, folder), true); err != nil {
		return err
	}
	fields := map[string]string{}
	var taken []string
	for _, t := range list.Items {
		if i, ok := names[t.Spec.Name]; ok {
			taken = append(taken, t.Spec.Name)
			fields[fmt.Sprintf("imageRefs[%d]", i)] = fmt.Sprintf("a %s named %q already exists in %s", t.Spec.Type, t.Spec.Name, folder)
		}
	}
	if len(taken) == 0 {
		return nil
	}
	sort.Strings(taken)
	return &apiError{status: http.StatusConflict, msg: fmt.Sprintf("These names already exist in %s; nothing was created: %s.", folder, strings.Join(taken, ", ")), fields: fields}
}

// rollback deletes the templates this request created before it failed.
func (s *Server) rollback(created []*edgev1alpha1.ProvisionTemplate) {
	for _, t := range created {
		if err := s.writer.Delete(context.Background(), t, client.Preconditions{UID: &t.UID}); client.IgnoreNotFound(err) != nil {
			s.log.Error(err, "Rolling back a template of a failed batch", "template", t.Name)
		}
	}
}
