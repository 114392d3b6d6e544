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

package crdcompat

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

type props = apiextensionsv1.JSONSchemaProps

func object(fields map[string]props, required ...string) *props {
	return &props{Type: "object", Properties: fields, Required: required}
}

func str(enum ...string) props {
	p := props{Type: "string"}
	for _, e := range enum {
		p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"` + e + `"`)})
	}
	return p
}

func arrayOf(items props) props {
	return props{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
}

func mapOf(values props) props {
	return props{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &values}}
}

// spec is a small EdgeService-like schema that each case changes.
func spec() *props {
	return object(map[string]props{
		"spec": *object(map[string]props{
			"path":   str(),
			"policy": str("static", "dynamic"),
			"factor": {Type: "integer"},
			"nodes":  arrayOf(str()),
			"image": *object(map[string]props{
				"name": str(),
				"tag":  str(),
			}, "name"),
			"labels": mapOf(str()),
			"port":   {XIntOrString: true},
			"config": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		}),
	})
}

// change returns spec() changed by f.
func change(f func(s *props)) *props {
	s := spec()
	f(s)
	return s
}

// specField returns a copy of .spec's field name, for a case to change and
// put back with setSpecField.
func specField(s *props, name string) props { return s.Properties["spec"].Properties[name] }

func setSpecField(s *props, name string, p props) {
	sp := s.Properties["spec"]
	sp.Properties[name] = p
	s.Properties["spec"] = sp
}

func TestSchemas(t *testing.T) {
	tests := []struct {
		name string
		old  *props
		new  *props
		want []Incompatibility
	}{
		{name: "unchanged", old: spec(), new: spec()},
		{name: "nil old", old: nil, new: spec()},
		{name: "field added", old: spec(), new: change(func(s *props) { setSpecField(s, "revisionHistoryLimit", props{Type: "integer"}) })},
		{
			name: "enum widened",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "policy", str("static", "dynamic", "spread")) }),
		},
		{
			name: "enum reordered and respaced",
			old:  spec(),
			new: change(func(s *props) {
				p := str()
				p.Enum = []apiextensionsv1.JSON{{Raw: []byte(` "dynamic"`)}, {Raw: []byte(`"static" `)}}
				setSpecField(s, "policy", p)
			}),
		},
		{name: "enum dropped: any value now", old: spec(), new: change(func(s *props) { setSpecField(s, "policy", str()) })},
		{
			name: "optional made required with a default",
			old:  spec(),
			new: change(func(s *props) {
				sp := s.Properties["spec"]
				f := sp.Properties["path"]
				f.Default = &apiextensionsv1.JSON{Raw: []byte(`"/"`)}
				sp.Properties["path"] = f
				sp.Required = []string{"path"}
				s.Properties["spec"] = sp
			}),
		},
		{
			name: "required relaxed",
			old:  spec(),
			new: change(func(s *props) {
				img := specField(s, "image")
				img.Required = nil
				setSpecField(s, "image", img)
			}),
		},
		{
			name: "tighter bounds are not judged here",
			old:  spec(),
			new: change(func(s *props) {
				f := specField(s, "factor")
				f.Maximum = ptr.To(10.0)
				setSpecField(s, "factor", f)
			}),
		},
		{
			name: "unknown fields kept from now on",
			old:  spec(),
			new: change(func(s *props) {
				img := specField(s, "image")
				img.XPreserveUnknownFields = ptr.To(true)
				setSpecField(s, "image", img)
			}),
		},
		{
			name: "field removed",
			old:  spec(),
			new:  change(func(s *props) { delete(s.Properties["spec"].Properties, "factor") }),
			want: []Incompatibility{{Path: ".spec.factor", Kind: Removed}},
		},
		{
			name: "field renamed",
			old:  spec(),
			new: change(func(s *props) {
				setSpecField(s, "replicas", specField(s, "factor"))
				delete(s.Properties["spec"].Properties, "factor")
			}),
			want: []Incompatibility{{Path: ".spec.factor", Kind: Removed}},
		},
		{
			name: "nested field removed",
			old:  spec(),
			new: change(func(s *props) {
				img := specField(s, "image")
				delete(img.Properties, "tag")
				setSpecField(s, "image", img)
			}),
			want: []Incompatibility{{Path: ".spec.image.tag", Kind: Removed}},
		},
		{
			name: "integer retyped to string",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "factor", str()) }),
			want: []Incompatibility{{Path: ".spec.factor", Kind: Retyped, Detail: "integer → string"}},
		},
		{
			name: "int-or-string narrowed to integer",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "port", props{Type: "integer"}) }),
			want: []Incompatibility{{Path: ".spec.port", Kind: Retyped, Detail: "int-or-string → integer"}},
		},
		{
			name: "object retyped to array: one finding, not one per field below",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "image", arrayOf(str())) }),
			want: []Incompatibility{{Path: ".spec.image", Kind: Retyped, Detail: "object → array"}},
		},
		{
			name: "array items retyped",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "nodes", arrayOf(props{Type: "integer"})) }),
			want: []Incompatibility{{Path: ".spec.nodes[*]", Kind: Retyped, Detail: "string → integer"}},
		},
		{
			name: "array items' schema dropped",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "nodes", props{Type: "array"}) }),
			want: []Incompatibility{{Path: ".spec.nodes[*]", Kind: Retyped, Detail: "string → untyped"}},
		},
		{
			name: "map values retyped",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "labels", mapOf(props{Type: "boolean"})) }),
			want: []Incompatibility{{Path: ".spec.labels.*", Kind: Retyped, Detail: "string → boolean"}},
		},
		{
			name: "a field newly required",
			old:  spec(),
			new: change(func(s *props) {
				sp := s.Properties["spec"]
				sp.Required = []string{"path"}
				s.Properties["spec"] = sp
			}),
			want: []Incompatibility{{Path: ".spec.path", Kind: NewlyRequired}},
		},
		{
			name: "a new field, required",
			old:  spec(),
			new: change(func(s *props) {
				img := specField(s, "image")
				img.Properties["digest"] = str()
				img.Required = append(img.Required, "digest")
				setSpecField(s, "image", img)
			}),
			want: []Incompatibility{{Path: ".spec.image.digest", Kind: NewlyRequired}},
		},
		{
			name: "enum value removed",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "policy", str("static")) }),
			want: []Incompatibility{{Path: ".spec.policy", Kind: EnumNarrowed, Detail: `"dynamic" no longer allowed`}},
		},
		{
			name: "enum where any value was allowed",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "path", str("/")) }),
			want: []Incompatibility{{Path: ".spec.path", Kind: EnumNarrowed}},
		},
		{
			name: "unknown fields no longer kept",
			old:  spec(),
			new:  change(func(s *props) { setSpecField(s, "config", props{Type: "object"}) }),
			want: []Incompatibility{{Path: ".spec.config", Kind: Removed}},
		},
		{
			name: "several at once, ordered by path",
			old:  spec(),
			new: change(func(s *props) {
				delete(s.Properties["spec"].Properties, "path")
				setSpecField(s, "factor", str())
				setSpecField(s, "policy", str("dynamic"))
			}),
			want: []Incompatibility{
				{Path: ".spec.factor", Kind: Retyped},
				{Path: ".spec.path", Kind: Removed},
				{Path: ".spec.policy", Kind: EnumNarrowed},
			},
		},
		{
			name: "schema gone",
			old:  spec(),
			new:  nil,
			want: []Incompatibility{{Path: "", Kind: Retyped, Detail: "object → untyped"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Schemas(tt.old, tt.new)
			if !matches(got, tt.want) {
				t.Errorf("Schemas() = %v\nwant %v", got, tt.want)
			}
		})
	}
}

// matches compares path and kind, and the detail where want gives one.
func matches(got, want []Incompatibility) bool {
	return slices.EqualFunc(got, want, func(g, w Incompatibility) bool {
		return g.Path == w.Path && g.Kind == w.Kind && (w.Detail == "" || g.Detail == w.Detail) && g.Detail != ""
	})
}

func crd(mutate func(c *apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "edge.edgeplane.io",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "EdgeService", Plural: "edgeservices"},
		Scope: apiextensionsv1.NamespaceScoped,
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1alpha1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: spec()},
			Subresources: &apiextensionsv1.CustomResourceSubresources{
				Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
				Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.factor", StatusReplicasPath: ".status.replicas"},
			},
		}},
	}}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func TestCRDs(t *testing.T) {
	v := func(c *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionVersion {
		return &c.Spec.Versions[0]
	}
	tests := []struct {
		name string
		new  *apiextensionsv1.CustomResourceDefinition
		want []Incompatibility
	}{
		{name: "unchanged", new: crd(nil)},
		{
			name: "a version added",
			new: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta1", Served: true})
			}),
		},
		{name: "printer column added", new: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
			v(c).AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Ready", Type: "string", JSONPath: ".status.ready"}}
		})},
		{
			name: "scope changed",
			new:  crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped }),
			want: []Incompatibility{{Path: "spec.scope", Kind: Retyped, Detail: "Namespaced → Cluster"}},
		},
		{
			name: "kind and plural renamed",
			new: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Names.Kind, c.Spec.Names.Plural = "Service", "services"
			}),
			want: []Incompatibility{{Path: "spec.names.kind", Kind: Retyped}, {Path: "spec.names.plural", Kind: Retyped}},
		},
		{
			name: "version gone",
			new:  crd(func(c *apiextensionsv1.CustomResourceDefinition) { v(c).Name = "v1beta1" }),
			want: []Incompatibility{{Path: "v1alpha1", Kind: Removed, Detail: "version no longer defined"}},
		},
		{
			name: "version no longer served",
			new:  crd(func(c *apiextensionsv1.CustomResourceDefinition) { v(c).Served = false }),
			want: []Incompatibility{{Path: "v1alpha1", Kind: Removed, Detail: "version no longer served"}},
		},
		{
			name: "subresources gone",
			new:  crd(func(c *apiextensionsv1.CustomResourceDefinition) { v(c).Subresources = nil }),
			want: []Incompatibility{{Path: "v1alpha1/status", Kind: Removed}, {Path: "v1alpha1/scale", Kind: Removed}},
		},
		{
			name: "scale moved to another field",
			new: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
				v(c).Subresources.Scale.SpecReplicasPath = ".spec.replicas"
			}),
			want: []Incompatibility{{Path: "v1alpha1/scale", Kind: Retyped}},
		},
		{
			name: "a field removed, under its version",
			new: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
				delete(v(c).Schema.OpenAPIV3Schema.Properties["spec"].Properties, "nodes")
			}),
			want: []Incompatibility{{Path: "v1alpha1.spec.nodes", Kind: Removed}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CRDs(crd(nil), tt.new)
			if !matches(got, tt.want) {
				t.Errorf("CRDs() = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestIncompatibilityString(t *testing.T) {
	i := Incompatibility{Path: "v1alpha1.spec.factor", Kind: Retyped, Detail: "integer → string"}
	if got, want := i.String(), "v1alpha1.spec.factor: retyped (integer → string)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// An old version that was not served promised nothing.
func TestCRDsIgnoresUnservedOldVersions(t *testing.T) {
	old := crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Served = false })
	if got := CRDs(old, crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions = nil })); len(got) != 0 {
		t.Errorf("CRDs() = %v, want nothing", got)
	}
}
