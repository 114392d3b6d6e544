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
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// generated reports whether controller-gen writes the file at a path
// relative to the repository root.
func generated(rel string) bool {
	return strings.HasPrefix(rel, "config/crd/bases/") ||
		rel == "config/rbac/role.yaml" ||
		strings.HasPrefix(rel, "config/namespaced-rbac/role_") ||
		rel == "config/hub/role.yaml" || rel == "config/hub/role_lease.yaml" || rel == "config/hub/role_system.yaml" ||
		strings.HasPrefix(rel, "charts/edgeplane/crds/") ||
		strings.HasPrefix(rel, "charts/edgeplane/files/manager-role") ||
		strings.HasPrefix(rel, "charts/edgeplane/files/hub-role") ||
		strings.HasPrefix(rel, "api/v1alpha1/applyconfiguration/") ||
		filepath.Base(rel) == "zz_generated.deepcopy.go"
}

// TestGeneratedFilesAreCurrent regenerates deepcopy code, CRDs and RBAC in a
// copy of the repository and fails when the committed files differ.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := testenv.RepoRoot()
	tmp := t.TempDir()
	committed := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == "bin" || rel == "dist" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(rel) {
			committed[rel] = data
			return nil // the copy starts without them, so stale files show up
		}
		return os.WriteFile(filepath.Join(tmp, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("bash", filepath.Join(root, "hack", "generate.sh"), "all", tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/generate.sh: %v\n%s", err, out)
	}

	fresh := map[string][]byte{}
	_ = filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(tmp, path)
		rel = filepath.ToSlash(rel)
		if err == nil && !d.IsDir() && generated(rel) {
			fresh[rel], err = os.ReadFile(path)
		}
		return err
	})
	for rel, want := range fresh {
		got, ok := committed[rel]
		switch {
		case !ok:
			t.Errorf("%s is generated but not committed: run make generate manifests", rel)
		case !bytes.Equal(got, want):
			t.Errorf("%s differs from a fresh generation: run make generate manifests", rel)
		}
	}
	for rel := range committed {
		if _, ok := fresh[rel]; !ok {
			t.Errorf("%s is committed but no longer generated: delete it", rel)
		}
	}
}
