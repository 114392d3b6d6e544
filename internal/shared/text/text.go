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

// Package text holds what the manager and the agent do to strings they
// write into objects: messages cut to what the API server accepts.
package text

import "unicode/utf8"

// Cut cuts s to at most n bytes, on a character boundary, marking the
// cut with "...".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(0, n-len("..."))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
