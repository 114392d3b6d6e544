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

package paths

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	good := map[string]string{
		"/": "/", "/a": "/a", "/a/": "/a", "/plant/line-1": "/plant/line-1", "/a b/c.d": "/a b/c.d", "/über": "/über",
	}
	for in, want := range good {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "a/b", "//", "/a//b", "/a/./b", "/a/../b", "/..", "/a\x00b", "/a\nb", "/" + strings.Repeat("x", 1024)} {
		if got, err := Normalize(in); err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", in, got)
		}
	}
}

func TestAncestorsJoinSplit(t *testing.T) {
	if got := Ancestors("/a/b/c"); !reflect.DeepEqual(got, []string{"/", "/a", "/a/b", "/a/b/c"}) {
		t.Errorf("Ancestors = %v", got)
	}
	if got := Ancestors("/"); !reflect.DeepEqual(got, []string{"/"}) {
		t.Errorf("Ancestors(/) = %v", got)
	}
	for _, p := range []string{"/a", "/a/b", "/a/b/c"} {
		parent, name := Split(p)
		if Join(parent, name) != p {
			t.Errorf("Join(Split(%q)) = %q", p, Join(parent, name))
		}
	}
}

// FuzzNormalize checks that a normalized path is a fixed point, passes the
// rules again and never panics.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"/", "/a/b/", "", "/a/../b", "/\x7f", "//", "/a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Normalize(in)
		if err != nil {
			return
		}
		again, err := Normalize(out)
		if err != nil || again != out {
			t.Fatalf("Normalize(%q) = %q, which normalizes to %q, %v", in, out, again, err)
		}
		if out != "/" && strings.HasSuffix(out, "/") {
			t.Fatalf("Normalize(%q) = %q keeps a trailing slash", in, out)
		}
	})
}
