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

import (
	"os"
	"regexp"
	"sync"
	"testing"
)

// celRule is the ImageRef type's CEL rule as controller-gen wrote it into
// the EdgeService CRD: the API server's grammar, which Parse must match.
var celRule = sync.OnceValues(func() (*regexp.Regexp, error) {
	crd, err := os.ReadFile("../../../config/crd/bases/edge.edgeplane.io_edgeservices.yaml")
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`rule: self\.matches\('(\^\[a-z0-9\][^']*)'\)`).FindSubmatch(crd)
	if m == nil {
		return nil, os.ErrNotExist
	}
	return regexp.Compile(string(m[1]))
})

// agrees checks that Parse accepts exactly what the CEL rule accepts, and
// splits it where the rule's groups do.
func agrees(t *testing.T, s string) {
	t.Helper()
	rule, err := celRule()
	if err != nil {
		t.Fatalf("reading the ImageRef rule from the CRD: %v", err)
	}
	r, err := Parse(s)
	if want := rule.MatchString(s) && len(s) <= MaxLength; (err == nil) != want {
		t.Fatalf("Parse(%q) error = %v; the CRD's rule says valid = %v", s, err, want)
	}
	if err == nil && r.String() != s {
		t.Fatalf("Parse(%q) = %+v", s, r)
	}
}

func TestParseAgreesWithTheCRDRule(t *testing.T) {
	for _, s := range []string{"nginx@1.25#linux", "a/b.c_d-e@T_1.-x#os_-9", "a..b@1#linux", "a/@1#linux", "a/b/@1#linux", "a-@1#linux", "_a@1#linux",
		"a@_1#linux", "a@-1#linux", "a@1#9os", "a@1#", "@1#linux", "a@#linux", "a@1@2#linux", "a#b@1#linux", "A@1#linux",
		"a@" + string(make([]byte, 129)) + "#x", "a@" + "t123456789t123456789t123456789t123456789t123456789t123456789t123456789t123456789t123456789t123456789t123456789t123456789t1234567" + "#x",
		"a@1#abcdefghijabcdefghijabcdefghijab", "a@1#abcdefghijabcdefghijabcdefghijabc", "a@1#linux\n", "é@1#linux"} {
		agrees(t, s)
	}
}
