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

// Package metapatch sends patches whose answer is the object's metadata
// alone (client-go's metadata client): kube-apiserver then encodes a
// PartialObjectMetadata, not the whole custom resource as JSON, for a
// writer that never reads the echo.
package metapatch

import (
	"context"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client patches objects of the kinds c knows, answered with metadata.
type Client struct {
	c  client.Client
	md metadata.Interface // nil: through c, answered in full
}

// New returns a Client over the API server of cfg; c maps objects to
// their resources.
func New(c client.Client, cfg *rest.Config, hc *http.Client) (*Client, error) {
	md, err := metadata.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &Client{c: c, md: md}, nil
}

// Through returns a Client that patches through c, answered in full: for
// a writer made without a manager's config, as some suites make them.
func Through(c client.Client) *Client { return &Client{c: c} }

// Patch sends p of obj (to subresource if given) and sets obj's metadata
// to what the API server holds after it; the rest of obj stays as the
// caller left it, which is what the patch was computed from.
func (m *Client) Patch(ctx context.Context, obj client.Object, p client.Patch, opts metav1.PatchOptions, subresource ...string) error {
	if m.md == nil {
		return m.patchThrough(ctx, obj, p, opts, subresource...)
	}
	gvk, err := m.c.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	mapping, err := m.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := p.Data(obj)
	if err != nil {
		return fmt.Errorf("computing the patch: %w", err)
	}
	res := m.md.Resource(mapping.Resource)
	var r metadata.ResourceInterface = res
	if ns := obj.GetNamespace(); ns != "" {
		r = res.Namespace(ns)
	}
	out, err := r.Patch(ctx, obj.GetName(), p.Type(), data, opts, subresource...)
	if err != nil {
		return err
	}
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			*om = out.ObjectMeta
			return nil
		}
	}
	obj.SetResourceVersion(out.ResourceVersion)
	obj.SetGeneration(out.Generation)
	return nil
}

// patchThrough is Patch through controller-runtime's client.
func (m *Client) patchThrough(ctx context.Context, obj client.Object, p client.Patch, opts metav1.PatchOptions, subresource ...string) error {
	var po []client.PatchOption
	var so []client.SubResourcePatchOption
	add := func(o option) { po, so = append(po, o), append(so, o) }
	if opts.FieldManager != "" {
		add(client.FieldOwner(opts.FieldManager))
	}
	if opts.Force != nil && *opts.Force {
		add(client.ForceOwnership)
	}
	if opts.FieldValidation != "" {
		add(client.FieldValidation(opts.FieldValidation))
	}
	if len(subresource) == 0 {
		return m.c.Patch(ctx, obj, p, po...)
	}
	return m.c.SubResource(subresource[0]).Patch(ctx, obj, p, so...)
}

// option is a patch option for an object and its subresources alike.
type option interface {
	client.PatchOption
	client.SubResourcePatchOption
}
