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
	"cmp"
	"net/http"
	"net/url"
	"slices"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

// treeEntry is an item of a folder's listing: a folder or a template.
type treeEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	// Path is the entry's own full path, the parent path a folder's
	// children are listed by.
	Path        string  `json:"path"`
	ImageRef    *string `json:"imageRef"`
	Children    *int32  `json:"children"`
	CreatedTime string  `json:"createdTime"`
}

// listFolder serves GET /api/v1/provision-template/path-label: the
// entries of one folder of the tree (path, default /), folders first,
// then by name. It is not in the contract, which only creates entries;
// every client, the console among them, needs it to see the tree.
func (s *Server) listFolder(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, aerr := parsePage(q)
	if aerr != nil {
		return nil, aerr
	}
	folder, aerr := queryPath(q, false)
	if aerr != nil {
		return nil, aerr
	}
	if folder != "/" {
		found := &edgev1alpha1.ProvisionTemplateList{}
		if err := s.lookup(r.Context(), found, index.FolderByPath, index.Key(s.opts.Namespace, folder), true); err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(found.Items, func(f edgev1alpha1.ProvisionTemplate) bool { return f.DeletionTimestamp == nil }) {
			return nil, notFound("No folder %s.", folder)
		}
	}
	list := &edgev1alpha1.ProvisionTemplateList{}
	if err := s.lookup(r.Context(), list, index.TemplateByParent, index.Key(s.opts.Namespace, folder), true); err != nil {
		return nil, err
	}
	entries := make([]treeEntry, 0, len(list.Items))
	for i := range list.Items {
		t := &list.Items[i]
		if t.DeletionTimestamp != nil {
			continue // going: no longer in the tree for a client
		}
		e := treeEntry{ID: string(t.UID), Name: t.Spec.Name, Type: string(t.Spec.Type), Path: paths.Join(folder, t.Spec.Name), CreatedTime: s.formatTime(t.CreationTimestamp.Time)}
		if t.Spec.Type == edgev1alpha1.TypeFolder {
			n := t.Status.Children
			e.Children = &n
		} else {
			ref := string(t.Spec.ImageRef)
			e.ImageRef = &ref
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b treeEntry) int {
		if a.Type != b.Type {
			if a.Type == string(edgev1alpha1.TypeFolder) {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return paginate(entries, p), nil
}

// queryPath reads the path query parameter of a read by path. Absent or
// empty, it is the root, unless required: then absent is refused, and
// empty is refused as the delete refuses it in its body.
func queryPath(q url.Values, required bool) (string, *apiError) {
	fields := map[string]string{}
	p, ok := single(q, "path", fields)
	switch {
	case len(fields) > 0:
	case !ok && required:
		fields["path"] = "is required"
	case !required && (!ok || p == ""):
		return "/", nil
	default:
		p = checkPath(&p, fields)
	}
	if len(fields) > 0 {
		return "", badFields(fields)
	}
	return p, nil
}
