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

package imageref

import "testing"

// FuzzParse checks that Parse accepts what the CRD's CEL rule accepts, that
// a parsed ref prints back to its input, and that it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"nginx@1.25#linux", "sensor/reader@2.0.1#sylixos", "a@b", "@#", "A@1#linux", "a@1#Linux", "a..b@1#linux", "a@" + string(make([]byte, 200)) + "#x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		agrees(t, s)
		r, err := Parse(s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, r.String())
		}
		if r.Name == "" || r.Tag == "" || r.OS == "" {
			t.Fatalf("Parse(%q) = %+v has an empty part", s, r)
		}
	})
}
