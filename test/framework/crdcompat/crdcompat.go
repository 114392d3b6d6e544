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

// Package crdcompat finds the changes of a CRD that break what a released
// version promised: within one API version (v1alpha1 here) a CRD may only
// grow. hack/crdcompat_test.go compares each CRD with the last release's.
//
// What counts as a break, and why:
//
//   - Removed: a field, a served version, a subresource, or unknown fields
//     no longer kept (x-kubernetes-preserve-unknown-fields turned off).
//     Objects stored with the field lose it on their next write (pruning),
//     and clients that set or read it break. A renamed field is a removal
//     and an addition: it is reported as removed.
//   - Retyped: a field's type changed (string, integer, number, boolean,
//     array, object, int-or-string, or untyped), or the CRD's scope, kind
//     or plural. A client decoding the old type fails on the new.
//   - Newly required: a field the old schema did not require, and that
//     has no default. Objects and manifests written for the old schema
//     are refused.
//   - Enum narrowed: a value the old enum allowed is refused, or a field
//     that took any value now takes a fixed list. Enum values are the API's
//     vocabulary: one removed is a word renamed or dropped.
//
// Left out on purpose: tighter bounds (maximum, maxLength, maxItems,
// pattern), nullable turned off, new CEL rules, list types and keys, and
// allOf/anyOf/oneOf. They tighten validation without changing the shape
// of the data; kube-apiserver's validation ratcheting lets objects that
// break such a rule be updated as long as the field is unchanged, and
// whether a tighter bound breaks users is a judgment a review makes, not
// a rule a test can.
package crdcompat

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Kind is the kind of an incompatibility.
type Kind string

// The kinds of incompatibility (package comment).
const (
	Removed       Kind = "removed"
	Retyped       Kind = "retyped"
	NewlyRequired Kind = "newly required"
	EnumNarrowed  Kind = "enum narrowed"
)

// Incompatibility is one change that breaks the old schema's promise.
type Incompatibility struct {
	// Path is where, as a field path: ".spec.image.pullPolicy", with
	// "[*]" for an array's items and ".*" for a map's values; CRDs
	// prefixes it with the version ("v1alpha1.spec...").
	Path string
	Kind Kind
	// Detail says what changed, e.g. "string → integer".
	Detail string
}

func (i Incompatibility) String() string {
	return fmt.Sprintf("%s: %s (%s)", i.Path, i.Kind, i.Detail)
}

// Schemas returns what in the new schema breaks the old one, ordered by
// path. Two nil schemas, or a nil old one, have nothing to break.
func Schemas(old, new *apiextensionsv1.JSONSchemaProps) []Incompatibility {
	var found []Incompatibility
	walk("", old, new, &found)
	sort.SliceStable(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	return found
}

// CRDs returns what in the new CRD breaks the old one: its scope, kind
// and plural, then each version the old one served — gone, no longer
// served, a subresource gone, or its schema broken (Schemas).
func CRDs(old, new *apiextensionsv1.CustomResourceDefinition) []Incompatibility {
	var found []Incompatibility
	add := func(path string, k Kind, format string, args ...any) {
		found = append(found, Incompatibility{Path: path, Kind: k, Detail: fmt.Sprintf(format, args...)})
	}
	if old.Spec.Scope != new.Spec.Scope {
		add("spec.scope", Retyped, "%s → %s", old.Spec.Scope, new.Spec.Scope)
	}
	if old.Spec.Names.Kind != new.Spec.Names.Kind {
		add("spec.names.kind", Retyped, "%s → %s", old.Spec.Names.Kind, new.Spec.Names.Kind)
	}
	if old.Spec.Names.Plural != new.Spec.Names.Plural {
		add("spec.names.plural", Retyped, "%s → %s", old.Spec.Names.Plural, new.Spec.Names.Plural)
	}
	for _, ov := range old.Spec.Versions {
		if !ov.Served {
			continue
		}
		i := slices.IndexFunc(new.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == ov.Name })
		if i < 0 {
			add(ov.Name, Removed, "version no longer defined")
			continue
		}
		nv := new.Spec.Versions[i]
		if !nv.Served {
			add(ov.Name, Removed, "version no longer served")
			continue
		}
		if ov.Subresources != nil {
			if ov.Subresources.Status != nil && (nv.Subresources == nil || nv.Subresources.Status == nil) {
				add(ov.Name+"/status", Removed, "status subresource removed")
			}
			if oldScale := ov.Subresources.Scale; oldScale != nil {
				newScale := (*apiextensionsv1.CustomResourceSubresourceScale)(nil)
				if nv.Subresources != nil {
					newScale = nv.Subresources.Scale
				}
				switch {
				case newScale == nil:
					add(ov.Name+"/scale", Removed, "scale subresource removed")
				case oldScale.SpecReplicasPath != newScale.SpecReplicasPath || oldScale.StatusReplicasPath != newScale.StatusReplicasPath:
					add(ov.Name+"/scale", Retyped, "replicas paths %s, %s → %s, %s",
						oldScale.SpecReplicasPath, oldScale.StatusReplicasPath, newScale.SpecReplicasPath, newScale.StatusReplicasPath)
				}
			}
		}
		var oldSchema, newSchema *apiextensionsv1.JSONSchemaProps
		if ov.Schema != nil {
			oldSchema = ov.Schema.OpenAPIV3Schema
		}
		if nv.Schema != nil {
			newSchema = nv.Schema.OpenAPIV3Schema
		}
		for _, f := range Schemas(oldSchema, newSchema) {
			f.Path = ov.Name + f.Path
			found = append(found, f)
		}
	}
	return found
}

// walk appends to found what new breaks of old at path.
func walk(path string, old, new *apiextensionsv1.JSONSchemaProps, found *[]Incompatibility) {
	add := func(path string, k Kind, format string, args ...any) {
		*found = append(*found, Incompatibility{Path: path, Kind: k, Detail: fmt.Sprintf(format, args...)})
	}
	if old == nil {
		return
	}
	if new == nil {
		// No schema is no constraint: any value is accepted and kept
		// only where unknown fields are preserved, which the parent's
		// checks see.
		new = &apiextensionsv1.JSONSchemaProps{}
	}
	if ot, nt := typeOf(old), typeOf(new); ot != nt {
		add(path, Retyped, "%s → %s", ot, nt)
		return // below a retyped field, every difference is that one
	}
	if preserves(old) && !preserves(new) {
		add(path, Removed, "unknown fields no longer kept (x-kubernetes-preserve-unknown-fields)")
	}
	for _, name := range sortedKeys(old.Properties) {
		np, ok := new.Properties[name]
		if !ok {
			add(path+"."+name, Removed, "not in the new schema; a rename shows as a removal")
			continue
		}
		op := old.Properties[name]
		walk(path+"."+name, &op, &np, found)
	}
	for _, r := range new.Required {
		// A default fills a required field in before validation: old
		// manifests still pass.
		if !slices.Contains(old.Required, r) && new.Properties[r].Default == nil {
			add(path+"."+r, NewlyRequired, "required now, optional before")
		}
	}
	if len(new.Enum) > 0 {
		if len(old.Enum) == 0 {
			add(path, EnumNarrowed, "any value before, one of %s now", enumString(new.Enum))
		} else {
			allowed := enumSet(new.Enum)
			for _, v := range old.Enum {
				if !allowed[canonical(v)] {
					add(path, EnumNarrowed, "%s no longer allowed", canonical(v))
				}
			}
		}
	}
	if old.Items != nil && old.Items.Schema != nil {
		var ns *apiextensionsv1.JSONSchemaProps
		if new.Items != nil {
			ns = new.Items.Schema
		}
		walk(path+"[*]", old.Items.Schema, ns, found)
	}
	if old.AdditionalProperties != nil && old.AdditionalProperties.Schema != nil {
		var ns *apiextensionsv1.JSONSchemaProps
		if new.AdditionalProperties != nil {
			ns = new.AdditionalProperties.Schema
		}
		walk(path+".*", old.AdditionalProperties.Schema, ns, found)
	}
}

// typeOf names a schema's type: its type, int-or-string, or untyped.
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "":
		return "untyped"
	default:
		return s.Type
	}
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// canonical is an enum value as compact JSON, so that "a" and "a" with
// other spacing compare equal.
func canonical(v apiextensionsv1.JSON) string {
	var x any
	if err := json.Unmarshal(v.Raw, &x); err != nil {
		return string(v.Raw)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return string(v.Raw)
	}
	return string(b)
}

func enumSet(vs []apiextensionsv1.JSON) map[string]bool {
	set := make(map[string]bool, len(vs))
	for _, v := range vs {
		set[canonical(v)] = true
	}
	return set
}

func enumString(vs []apiextensionsv1.JSON) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = canonical(v)
	}
	return fmt.Sprint(s)
}
