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

package figures

import (
	"regexp"
	"strings"
)

var (
	figureLine = regexp.MustCompile(`^([a-z][a-z0-9_-]*): (.+)$`)
	figureKey  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
)

// Figure is one key=value of a figure line.
type Figure struct{ Key, Value string }

// ParseLine reads a harness's figure line, "prefix: key=value ...", every
// word after the prefix a key=value; ok is false for any other line.
func ParseLine(line string) (prefix string, figures []Figure, ok bool) {
	m := figureLine.FindStringSubmatch(line)
	if m == nil {
		return "", nil, false
	}
	for _, w := range strings.Fields(m[2]) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || !figureKey.MatchString(k) {
			return "", nil, false
		}
		figures = append(figures, Figure{k, v})
	}
	return m[1], figures, len(figures) > 0
}
