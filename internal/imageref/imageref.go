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

// Package imageref parses image refs of the form name@tag#os.
package imageref

import (
	"fmt"
	"regexp"
)

// pattern is the grammar of a ref. The ImageRef type in api/v1alpha1 carries
// the same expression as a CEL rule; a test keeps the two in agreement.
var pattern = regexp.MustCompile(`^([a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)@([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})#([a-z][a-z0-9_-]{0,31})$`)

// MaxLength is the longest ref accepted.
const MaxLength = 255

// Ref is a parsed image ref.
type Ref struct {
	Name string
	Tag  string
	OS   string
}

// String returns the ref as name@tag#os.
func (r Ref) String() string { return r.Name + "@" + r.Tag + "#" + r.OS }

// Parse parses name@tag#os.
func Parse(s string) (Ref, error) {
	if len(s) > MaxLength {
		return Ref{}, fmt.Errorf("image ref is longer than %d characters", MaxLength)
	}
	m := pattern.FindStringSubmatch(s)
	if m == nil {
		return Ref{}, fmt.Errorf("image ref %q must have the form name@tag#os, for example nginx@1.25#linux", s)
	}
	return Ref{Name: m[1], Tag: m[2], OS: m[3]}, nil
}
