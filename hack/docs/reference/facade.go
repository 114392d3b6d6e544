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

package reference

import (
	"fmt"
	"slices"
	"strings"
)

// methods are the HTTP methods of OpenAPI's path items, in the order an
// endpoint lists them.
var methods = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

const schemaRefPrefix = "#/components/schemas/"

// Facade renders the facade's OpenAPI 3 document as Markdown: its
// endpoints with their parameters, bodies and responses, then its
// schemas, in the document's order.
func Facade(spec []byte) ([]byte, error) {
	doc, err := decodeJSON(spec)
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	paths := doc.get("paths")
	if paths == nil || len(paths.keys) == 0 {
		return nil, fmt.Errorf("openapi.json: no paths")
	}
	f := &facade{doc: doc, anchors: map[string]string{}}

	// Anchors first, in the order the headings come, so that links may
	// point forward.
	var s Slugger
	for _, h := range []string{"Facade API reference", "Conventions", "Endpoints"} {
		s.Slug(h)
	}
	type op struct{ method, path string }
	var ops []op
	for _, p := range paths.keys {
		for _, m := range methods {
			if paths.get(p, m) != nil {
				ops = append(ops, op{m, p})
				f.anchors[m+" "+p] = s.Slug(opHeading(m, p))
			}
		}
	}
	s.Slug("Schemas")
	schemas := doc.get("components", "schemas")
	if schemas != nil {
		for _, name := range schemas.keys {
			f.anchors[schemaRefPrefix+name] = s.Slug(name)
		}
	}

	b := &strings.Builder{}
	info := doc.get("info")
	fmt.Fprintf(b, "# Facade API reference\n\n%s\n", generatedNote("apiserver/openapi.json"))
	fmt.Fprintf(b, "The `/api/v1` facade as its OpenAPI %s document, [apiserver/openapi.json](../../apiserver/openapi.json), describes it; "+
		"the manager serves the document at `/api/v1/openapi.json`. %s, version %s.\n\n", doc.get("openapi").str(), text(info.get("title").str()), text(info.get("version").str()))
	if d := info.get("description").str(); d != "" {
		fmt.Fprintf(b, "%s\n\n", text(d))
	}
	fmt.Fprintf(b, "## Conventions\n\n")
	f.security(b, doc.get("security"))
	fmt.Fprintf(b, "A table of fields names each field by its path in the object: `a.b` is field `b` of object `a`, `a[].b` field `b` of each item of array `a`. "+
		"A response is the envelope `{status, message, fieldErrors, data}`; its tables show `data`, and every failure is an [Error](#%s).\n\n", f.anchors[schemaRefPrefix+"Error"])

	fmt.Fprintf(b, "## Endpoints\n\n| Method | Path | Summary |\n| --- | --- | --- |\n")
	for _, o := range ops {
		fmt.Fprintf(b, "| %s | [%s](#%s) | %s |\n", strings.ToUpper(o.method), code(o.path), f.anchors[o.method+" "+o.path], cell(paths.get(o.path, o.method, "summary").str()))
	}
	b.WriteString("\n")
	for _, o := range ops {
		f.operation(b, o.method, o.path, paths.get(o.path))
	}

	if schemas != nil {
		fmt.Fprintf(b, "## Schemas\n\n")
		for _, name := range schemas.keys {
			sc := schemas.get(name)
			fmt.Fprintf(b, "### %s\n\n", name)
			if d := sc.get("description").str(); d != "" {
				fmt.Fprintf(b, "%s\n\n", text(d))
			}
			f.fields(b, sc)
		}
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n"), nil
}

func opHeading(method, path string) string { return strings.ToUpper(method) + " " + path }

type facade struct {
	doc *node
	// anchors of operations ("get /api/v1/node") and of schemas (by $ref).
	anchors map[string]string
}

// security says how requests authenticate, from the document's
// requirements and schemes.
func (f *facade) security(b *strings.Builder, reqs *node) {
	if reqs == nil || len(reqs.items) == 0 {
		return
	}
	var ways []string
	optional := false
	for _, r := range reqs.items {
		if len(r.keys) == 0 {
			optional = true
			continue
		}
		var names []string
		for _, k := range r.keys {
			sc := f.doc.get("components", "securitySchemes", k)
			desc := sc.get("type").str()
			if s := sc.get("scheme").str(); s != "" {
				desc += " " + s
			}
			names = append(names, fmt.Sprintf("`%s` (%s): %s", k, text(desc), text(sc.get("description").str())))
		}
		ways = append(ways, strings.Join(names, " and "))
	}
	fmt.Fprintf(b, "Authentication: %s", strings.Join(ways, "; or "))
	if optional {
		b.WriteString(" The document also allows requests without credentials.")
	}
	b.WriteString("\n\n")
}

func (f *facade) operation(b *strings.Builder, method, path string, item *node) {
	op := item.get(method)
	fmt.Fprintf(b, "### %s\n\n", opHeading(method, path))
	fmt.Fprintf(b, "%s", text(op.get("summary").str()))
	if id := op.get("operationId").str(); id != "" {
		fmt.Fprintf(b, " (operation `%s`)", id)
	}
	b.WriteString(".\n\n")
	if d := op.get("description").str(); d != "" {
		fmt.Fprintf(b, "%s\n\n", text(d))
	}
	if sec := op.get("security"); sec != nil {
		f.security(b, sec)
	}

	// Parameters of the path item and of the operation, the latter
	// overriding the former by name and place.
	var params []*node
	for _, list := range []*node{item.get("parameters"), op.get("parameters")} {
		if list == nil {
			continue
		}
		for _, p := range list.items {
			p = f.resolve(p)
			params = slices.DeleteFunc(params, func(q *node) bool {
				return q.get("name").str() == p.get("name").str() && q.get("in").str() == p.get("in").str()
			})
			params = append(params, p)
		}
	}
	if len(params) > 0 {
		b.WriteString("Parameters:\n\n| Name | In | Type | Required | Description |\n| --- | --- | --- | --- | --- |\n")
		for _, p := range params {
			desc := p.get("description").str()
			if p.get("allowEmptyValue").bool() && !strings.Contains(strings.ToLower(desc), "empty") {
				desc = strings.TrimSpace(desc + " May be empty.")
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", code(p.get("name").str()), p.get("in").str(),
				f.typeAndValues(p.get("schema")), yes(p.get("required").bool()), cell(desc))
		}
		b.WriteString("\n")
	}

	if body := f.resolve(op.get("requestBody")); body != nil {
		req := ""
		if body.get("required").bool() {
			req = ", required"
		}
		for _, ct := range body.get("content").keys {
			fmt.Fprintf(b, "Request body (`%s`%s)", ct, req)
			if d := body.get("description").str(); d != "" {
				fmt.Fprintf(b, ": %s", text(d))
			}
			sc := body.get("content", ct, "schema")
			if ref := sc.get("$ref").str(); ref != "" {
				fmt.Fprintf(b, "; %s.\n\n", f.link(ref))
				continue
			}
			b.WriteString(".\n\n")
			f.fields(b, sc)
		}
	}

	responses := op.get("responses")
	if responses == nil {
		return
	}
	codes := slices.Clone(responses.keys)
	slices.Sort(codes)
	b.WriteString("Responses:\n\n| Status | Description | Body |\n| --- | --- | --- |\n")
	var shapes []string
	for _, c := range codes {
		r := f.resolve(responses.get(c))
		var bodies []string
		for _, ct := range r.get("content").keys {
			sc := r.get("content", ct, "schema")
			switch data := envelopeData(sc); {
			case sc.get("$ref").str() != "":
				bodies = append(bodies, f.link(sc.get("$ref").str()))
			case data != nil && data.get("$ref").str() != "":
				bodies = append(bodies, "`data`: "+f.link(data.get("$ref").str()))
			case data != nil && !f.hasFields(data):
				bodies = append(bodies, "`data`: "+f.typeAndValues(data))
			case data != nil:
				bodies = append(bodies, "`data`: "+f.typeOf(data)+", below")
				shapes = append(shapes, c)
			case !f.hasFields(sc):
				bodies = append(bodies, f.typeAndValues(sc))
			default:
				bodies = append(bodies, f.typeOf(sc)+", below")
				shapes = append(shapes, c)
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", c, cell(r.get("description").str()), strings.Join(bodies, "; "))
	}
	b.WriteString("\n")
	for _, c := range shapes {
		r := f.resolve(responses.get(c))
		for _, ct := range r.get("content").keys {
			sc := r.get("content", ct, "schema")
			if data := envelopeData(sc); data != nil {
				fmt.Fprintf(b, "Response %s, `data`:\n\n", c)
				f.fields(b, data)
				continue
			}
			fmt.Fprintf(b, "Response %s (`%s`):\n\n", c, ct)
			f.fields(b, sc)
		}
	}
}

// envelopeData is the schema of data when sc is an inline envelope
// {status, message, fieldErrors, data}; else nil.
func envelopeData(sc *node) *node {
	props := sc.get("properties")
	if props == nil || props.get("status") == nil || props.get("fieldErrors") == nil {
		return nil
	}
	return props.get("data")
}

// resolve follows a $ref to a component.
func (f *facade) resolve(n *node) *node {
	for range 10 {
		ref := n.get("$ref").str()
		if !strings.HasPrefix(ref, "#/") {
			return n
		}
		n = f.doc.get(strings.Split(strings.TrimPrefix(ref, "#/"), "/")...)
	}
	return n
}

// link is a link to the schema a $ref names.
func (f *facade) link(ref string) string {
	name := strings.TrimPrefix(ref, schemaRefPrefix)
	if a, ok := f.anchors[ref]; ok {
		return fmt.Sprintf("[%s](#%s)", name, a)
	}
	return code(ref)
}

// fields writes a table of a schema's fields, nested inline objects and
// arrays of them flattened into paths; or one line for a schema without
// fields.
func (f *facade) fields(b *strings.Builder, sc *node) {
	var rows []string
	f.fieldRows(&rows, "", sc, 0)
	if len(rows) == 0 {
		fmt.Fprintf(b, "%s.\n\n", f.typeAndValues(sc))
		return
	}
	b.WriteString("| Field | Type | Required | Description |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		b.WriteString(r)
	}
	b.WriteString("\n")
}

// hasFields says whether fields would write a table for sc.
func (f *facade) hasFields(sc *node) bool {
	var rows []string
	f.fieldRows(&rows, "", sc, 0)
	return len(rows) > 0
}

func (f *facade) fieldRows(rows *[]string, prefix string, sc *node, depth int) {
	if sc == nil || sc.get("$ref") != nil || depth > 8 {
		return
	}
	props := sc.get("properties")
	if props == nil {
		return
	}
	required := map[string]bool{}
	if r := sc.get("required"); r != nil {
		for _, it := range r.items {
			required[it.str()] = true
		}
	}
	for _, name := range props.keys {
		p := props.get(name)
		path := prefix + name
		*rows = append(*rows, fmt.Sprintf("| %s | %s | %s | %s |\n", code(path), f.typeAndValues(p), yes(required[name]), cell(p.get("description").str())))
		child, childPath := p, path+"."
		for child.get("items") != nil {
			child, childPath = child.get("items"), path+"[]."
			path += "[]"
		}
		f.fieldRows(rows, childPath, child, depth+1)
	}
}

// typeOf is a schema's type: a link to a named schema, an array or map of
// one, or a JSON type.
func (f *facade) typeOf(sc *node) string {
	if sc == nil {
		return ""
	}
	var t string
	switch {
	case sc.get("$ref") != nil:
		t = f.link(sc.get("$ref").str())
	case sc.get("allOf") != nil && len(sc.get("allOf").items) == 1:
		t = f.typeOf(sc.get("allOf").items[0])
	case sc.get("oneOf") != nil && sc.get("type") == nil:
		var alts []string
		for _, alt := range sc.get("oneOf").items {
			alts = append(alts, f.typeOf(alt))
		}
		t = "one of " + strings.Join(alts, ", ")
	case sc.get("type").str() == "array":
		t = "array of " + f.typeOf(sc.get("items"))
	case sc.get("type").str() == "object" && sc.get("additionalProperties") != nil && sc.get("additionalProperties").object:
		t = "map of string to " + f.typeOf(sc.get("additionalProperties"))
	default:
		t = sc.get("type").str()
		if t == "" {
			t = "any"
		}
		if format := sc.get("format").str(); format != "" {
			t += " (" + format + ")"
		}
	}
	if sc.get("nullable").bool() {
		t += ", nullable"
	}
	return t
}

// typeAndValues is a schema's type and the values it allows.
func (f *facade) typeAndValues(sc *node) string {
	t := f.typeOf(sc)
	if c := constraints(sc); c != "" {
		t += "; " + c
	}
	return t
}

// constraints says what values a schema allows besides its type: enum,
// bounds, lengths, item counts, pattern and default.
func constraints(sc *node) string {
	if sc == nil {
		return ""
	}
	var cs []string
	if enum := sc.get("enum"); enum != nil {
		var vs []string
		for _, v := range enum.items {
			vs = append(vs, code(v.plain()))
		}
		cs = append(cs, "one of "+strings.Join(vs, ", "))
	}
	if r := rangeOf(sc.get("minimum"), sc.get("maximum"), ""); r != "" {
		cs = append(cs, r)
	}
	switch lo, hi := sc.get("minLength"), sc.get("maxLength"); {
	case hi == nil && lo.scalar() == "1":
		cs = append(cs, "not empty")
	case lo.scalar() != "0":
		if r := rangeOf(lo, hi, " characters"); r != "" {
			cs = append(cs, r)
		}
	}
	if r := rangeOf(sc.get("minItems"), sc.get("maxItems"), " items"); r != "" {
		cs = append(cs, r)
	}
	if p := sc.get("pattern").str(); p != "" {
		cs = append(cs, "matches "+code(p))
	}
	if oneOf := sc.get("oneOf"); oneOf != nil && sc.get("type") != nil {
		var alts []string
		for _, alt := range oneOf.items {
			alts = append(alts, constraints(alt))
		}
		cs = append(cs, strings.Join(alts, ", or "))
	}
	if d := sc.get("default"); d != nil {
		cs = append(cs, "default "+code(d.plain()))
	}
	return strings.Join(cs, "; ")
}

// rangeOf says "1 to 10", "at least 1" or "at most 10", then unit.
func rangeOf(lo, hi *node, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return lo.scalar() + " to " + hi.scalar() + unit
	case lo != nil:
		return "at least " + lo.scalar() + unit
	case hi != nil:
		return "at most " + hi.scalar() + unit
	}
	return ""
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}
