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
	"strings"
)

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

// Parse parses name@tag#os. It is the grammar of the ImageRef type's CEL
// rule in api/v1alpha1, written out by hand because the facade parses a ref
// per container it renders; the tests hold it to that rule as the CRD
// carries it.
func Parse(s string) (Ref, error) {
	if len(s) > MaxLength {
		return Ref{}, fmt.Errorf("image ref is longer than %d characters", MaxLength)
	}
	name, rest, ok1 := strings.Cut(s, "@")
	tag, os, ok2 := strings.Cut(rest, "#")
	if !ok1 || !ok2 || !validName(name) || !validTag(tag) || !validOS(os) {
		return Ref{}, fmt.Errorf("image ref %q must have the form name@tag#os, for example nginx@1.25#linux", s)
	}
	return Ref{Name: name, Tag: tag, OS: os}, nil
}

func lowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// validName: lowercase letters and digits in runs separated by exactly one
// of . _ - /, starting and ending with a run.
func validName(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case lowerOrDigit(c):
			run++
		case (c == '.' || c == '_' || c == '-' || c == '/') && run > 0:
			run = 0
		default:
			return false
		}
	}
	return run > 0
}

// validTag: 1 to 128 of letters, digits, _ . -, not starting with . or -.
func validTag(s string) bool {
	if len(s) == 0 || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !lowerOrDigit(c) && !('A' <= c && c <= 'Z') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// validOS: 1 to 32 of lowercase letters, digits, _ -, starting with a letter.
func validOS(s string) bool {
	if len(s) == 0 || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !lowerOrDigit(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}
