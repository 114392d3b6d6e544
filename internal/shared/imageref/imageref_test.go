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

func TestParse(t *testing.T) {
	good := map[string]Ref{
		"nginx@1.25#linux":                {"nginx", "1.25", "linux"},
		"sensor/reader@2.0.1-rc1#sylixos": {"sensor/reader", "2.0.1-rc1", "sylixos"},
		"a.b_c-d@latest#linux":            {"a.b_c-d", "latest", "linux"},
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, in := range []string{"", "nginx", "nginx@1.25", "nginx#linux", "Nginx@1#linux", "nginx@1#Linux", "nginx@@1#linux", "/nginx@1#linux", "nginx@.1#linux", "nginx@1#linux#x"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
}
