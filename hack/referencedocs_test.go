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
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgeplane/edgeplane/hack/docs/reference"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestReferenceDocsAreCurrent generates the references of docs/reference
// (the CRDs', the facade's, the commands') into a temporary directory and
// fails when the committed files differ.
func TestReferenceDocsAreCurrent(t *testing.T) {
	root := testenv.RepoRoot()
	tmp := t.TempDir()
	if err := reference.Write(root, tmp); err != nil {
		t.Fatal(err)
	}
	for _, name := range reference.Files {
		rel := "docs/reference/" + name
		want, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case os.IsNotExist(err):
			t.Errorf("%s is generated but not committed: run make docs", rel)
		case err != nil:
			t.Error(err)
		case !bytes.Equal(got, want):
			t.Errorf("%s differs from a fresh generation from line %d on: run make docs", rel, firstDifference(got, want))
		}
	}
}

// firstDifference is the number of the first line where a and b differ.
func firstDifference(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(al), len(bl)) {
		if !bytes.Equal(al[i], bl[i]) {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
