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

// Package paths handles the folder paths of the path-label tree: absolute,
// '/'-separated, root "/", stored without a trailing slash. The rules are
// those of the FolderPath type's CEL rules in api/v1alpha1.
package paths

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// MaxLength is the longest path accepted, as in the CRD schema.
const MaxLength = 1024

// Normalize checks a path and returns it in canonical form: a trailing
// slash is removed; empty, "." and ".." segments and control characters are
// refused.
func Normalize(p string) (string, error) {
	if p == "" {
		return "", errors.New("path must not be empty")
	}
	if len(p) > MaxLength {
		return "", fmt.Errorf("path must be at most %d characters", MaxLength)
	}
	if !strings.HasPrefix(p, "/") {
		return "", errors.New("path must be absolute, starting with /")
	}
	if p == "/" {
		return p, nil
	}
	p = strings.TrimSuffix(p, "/")
	for _, seg := range strings.Split(p[1:], "/") {
		if err := CheckName(seg); err != nil {
			return "", fmt.Errorf("path segment %q: %w", seg, err)
		}
	}
	return p, nil
}

// CheckName checks one entry name of a folder: not empty, no '/', not "."
// or "..", no control characters.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("must not be empty")
	case name == "." || name == "..":
		return errors.New(`must not be "." or ".."`)
	case strings.Contains(name, "/"):
		return errors.New("must not contain /")
	case len(name) > 253:
		return errors.New("must be at most 253 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("must not contain control characters")
	}
	return nil
}

// Join joins a canonical folder path and an entry name.
func Join(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// Split splits a canonical path other than "/" into its parent and name.
func Split(p string) (parent, name string) {
	i := strings.LastIndex(p, "/")
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

// Ancestors returns a canonical path and every folder above it, root
// first: "/a/b" gives "/", "/a", "/a/b".
func Ancestors(p string) []string {
	out := []string{"/"}
	if p == "/" || p == "" {
		return out
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return append(out, p)
}
