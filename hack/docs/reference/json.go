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
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// node is a JSON value that keeps its object's keys in document order, so
// that the reference lists paths, fields and schemas as the OpenAPI
// document does.
type node struct {
	keys   []string         // an object's keys, in order
	fields map[string]*node // an object's values
	items  []*node          // an array's
	value  any              // a scalar: string, json.Number, bool or nil
	object bool
	array  bool
}

func decodeJSON(data []byte) (*node, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	n, err := decodeNode(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the top-level value")
	}
	return n, nil
}

func decodeNode(d *json.Decoder) (*node, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{object: true, fields: map[string]*node{}}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeNode(d)
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := n.fields[key]; !dup {
				n.keys = append(n.keys, key)
			}
			n.fields[key] = v
		}
		_, err := d.Token() // }
		return n, err
	case json.Delim('['):
		n := &node{array: true}
		for d.More() {
			v, err := decodeNode(d)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := d.Token() // ]
		return n, err
	default:
		return &node{value: tok}, nil
	}
}

// get follows object keys; nil when one is missing.
func (n *node) get(keys ...string) *node {
	for _, k := range keys {
		if n == nil || !n.object {
			return nil
		}
		n = n.fields[k]
	}
	return n
}

// str is a string value, or "".
func (n *node) str() string {
	if n == nil {
		return ""
	}
	s, _ := n.value.(string)
	return s
}

// plain is a scalar as a reader would write it: a string without quotes.
func (n *node) plain() string {
	if n == nil {
		return ""
	}
	if s, ok := n.value.(string); ok {
		return s
	}
	return n.scalar()
}

// bool is a boolean value, or false.
func (n *node) bool() bool {
	if n == nil {
		return false
	}
	b, _ := n.value.(bool)
	return b
}

// scalar is a scalar as JSON writes it: "a", 1, true, null.
func (n *node) scalar() string {
	if n == nil {
		return ""
	}
	if n.object || n.array {
		var parts []string
		if n.array {
			for _, it := range n.items {
				parts = append(parts, it.scalar())
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		for _, k := range n.keys {
			parts = append(parts, fmt.Sprintf("%q:%s", k, n.fields[k].scalar()))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	b, _ := json.Marshal(n.value)
	return string(b)
}
