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

package kubectledge

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// changes lists what differs between two configurations, key by key in
// their JSON form ("image.ref: a -> b"), sorted by key. A list is one
// value: its items have no names to pair them by. Values longer than
// maxValue runes are cut.
func changes(before, after any) ([]string, error) {
	b, err := flatten(before)
	if err != nil {
		return nil, err
	}
	a, err := flatten(after)
	if err != nil {
		return nil, err
	}
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		was, had := b[k]
		is, has := a[k]
		switch {
		case !had:
			out = append(out, fmt.Sprintf("%s: set to %s", k, cut(is)))
		case !has:
			out = append(out, fmt.Sprintf("%s: removed (was %s)", k, cut(was)))
		case was != is:
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, cut(was), cut(is)))
		}
	}
	return out, nil
}

// flatten maps each leaf of v's JSON form to its compact JSON, by its
// dotted path.
func flatten(v any) (map[string]string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any) error
	walk = func(prefix string, v any) error {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, c := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				if err := walk(p, c); err != nil {
					return err
				}
			}
			return nil
		}
		leaf, err := json.Marshal(v)
		if err != nil {
			return err
		}
		out[prefix] = string(leaf)
		return nil
	}
	return out, walk("", tree)
}

// maxValue is how many runes of a value a change shows.
const maxValue = 60

// cut shortens s to maxValue runes, never inside a character.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxValue {
		return s
	}
	return string([]rune(s)[:maxValue-3]) + "..."
}
