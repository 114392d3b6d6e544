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

package apiserver

import "testing"

func TestRepeatedKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"path":"/a"}`:             "",
		`{"path":"/a","path":"/b"}`: "path",
		`{"path":"/a","Path":"/b"}`: "Path",
		`{"a":[{"b":1},{"b":2}]}`:   "",
		`{"a":[{"b":1,"B":2}]}`:     "B",
		`{"a":{"b":{"c":1,"c":2}}}`: "c",
		`[{"x":1},{"x":1,"x":2}]`:   "x",
		`"just a string"`:           "",
		``:                          "",
		// Invalid documents end the walk (the fuzzer found "[000" spinning
		// it forever); decoding then says what is wrong.
		`[000`:    "",
		`{"a":`:   "",
		`{"a" 1}`: "",
		`[1,,2]`:  "",
		`{]`:      "",
		`[[[[`:    "",
	} {
		if got := repeatedKey([]byte(in)); got != want {
			t.Errorf("repeatedKey(%q) = %q, want %q", in, got, want)
		}
	}
}
