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

package hack

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// numberWords are the counts the docs spell out.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}

// TestDocCounts fails when a doc states a count the code can give and the
// code says otherwise: the methods a new runtime implements (agent.md).
func TestDocCounts(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		said *regexp.Regexp
		want int
	}{
		{"docs/agent.md", regexp.MustCompile(`(?s)implements\s+the\s+(\w+)\s+methods\s+above`), reflect.TypeFor[agent.Runtime]().NumMethod()},
	} {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		m := tc.said.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s no longer says %s: change the test with the doc", tc.doc, tc.said)
			continue
		}
		if got := slices.Index(numberWords, string(m[1])); got != tc.want {
			t.Errorf("%s says %q, the code has %d", tc.doc, m[0], tc.want)
		}
	}
}
