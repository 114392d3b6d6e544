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
	"bufio"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/crdcompat"
)

// releasesFile records the commit each release was cut from
// (docs/contributing.md, "Cutting a release"); its last row is the
// release the CRDs are compared with.
const releasesFile = "hack/releases.tsv"

// atCut stands in releasesFile for the commit of a release not yet
// committed: it is replaced by the commit once there is one.
const atCut = "HEAD-AT-CUT"

// crdDir holds the CRDs controller-gen writes.
const crdDir = "config/crd/bases"

type release struct{ version, commit string }

// releases reads releasesFile: a header row, then version<TAB>commit rows,
// oldest first.
func releases(t *testing.T) []release {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), releasesFile))
	if err != nil {
		t.Fatalf("%s: %v", releasesFile, err)
	}
	defer f.Close()
	semver := regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	hash := regexp.MustCompile(`^[0-9a-f]{40}$`)
	var rs []release
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if n == 1 {
			if line != "version\tcommit" {
				t.Errorf("%s:1: %q; want the header row \"version<TAB>commit\"", releasesFile, line)
			}
			continue
		}
		version, commit, ok := strings.Cut(line, "\t")
		if !ok || !semver.MatchString(version) || (commit != atCut && !hash.MatchString(commit)) {
			t.Errorf("%s:%d: %q; want vX.Y.Z<TAB>a full commit hash (or %s until the commit exists)", releasesFile, n, line, atCut)
			continue
		}
		rs = append(rs, release{version, commit})
	}
	if err := s.Err(); err != nil {
		t.Fatalf("%s: %v", releasesFile, err)
	}
	if len(rs) == 0 {
		t.Fatalf("%s records no release", releasesFile)
	}
	return rs
}

// inCI reports whether the tests run in CI (CI=true, as .ci/run's runner
// sets it).
func inCI() bool {
	ci := os.Getenv("CI")
	return ci != "" && ci != "false" && ci != "0"
}

func git(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = testenv.RepoRoot()
	return cmd.Output()
}

// TestReleasesFile checks the rows of hack/releases.tsv: each version
// once, and only the last one's commit may be the placeholder.
func TestReleasesFile(t *testing.T) {
	rs := releases(t)
	seen := map[string]bool{}
	for i, r := range rs {
		if seen[r.version] {
			t.Errorf("%s records %s twice", releasesFile, r.version)
		}
		seen[r.version] = true
		if r.commit == atCut && i < len(rs)-1 {
			t.Errorf("%s records %s at %s, and later releases after it: record its commit", releasesFile, r.version, atCut)
		}
	}
}

// TestCRDsChangeOnlyAdditively compares each CRD of the last release
// (git show COMMIT:config/crd/bases/FILE) with the working tree's and
// fails on a field removed, renamed or retyped, a field newly required or
// an enum narrowed (test/framework/crdcompat): within v1alpha1 the CRDs
// only grow. While the last release's commit is the placeholder, the CRDs
// are compared with HEAD's outside CI; in CI that, and a commit missing
// from the clone's history, fail.
func TestCRDsChangeOnlyAdditively(t *testing.T) {
	rs := releases(t)
	last := rs[len(rs)-1]
	ref := last.commit
	switch {
	case ref == atCut && inCI():
		t.Fatalf("%s records %s at %s, not a commit: nothing to compare the CRDs with. Replace it with the commit the release was cut from (docs/contributing.md, \"Cutting a release\")", releasesFile, last.version, atCut)
	case ref == atCut:
		t.Logf("%s records %s at %s: comparing with HEAD until the commit is recorded", releasesFile, last.version, atCut)
		ref = "HEAD"
	default:
		if _, err := git(t, "cat-file", "-e", ref+"^{commit}"); err != nil {
			t.Fatalf("%s was cut at %s (%s), which this clone's history lacks (a shallow clone? git fetch --unshallow): %v", last.version, ref, releasesFile, err)
		}
	}

	out, err := git(t, "ls-tree", "--name-only", ref, crdDir+"/")
	if err != nil {
		t.Fatalf("git ls-tree %s %s: %v", ref, crdDir, err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatalf("%s has no CRDs in %s", ref, crdDir)
	}
	compared := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".yaml") {
			continue
		}
		name := path.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := git(t, "show", ref+":"+f)
			if err != nil {
				t.Fatalf("git show %s:%s: %v", ref, f, err)
			}
			old := decodeCRD(t, data, ref+":"+f)
			data, err = os.ReadFile(filepath.Join(testenv.RepoRoot(), crdDir, name))
			if os.IsNotExist(err) {
				t.Fatalf("%s: CRD %s of %s is gone", name, old.Name, last.version)
			}
			if err != nil {
				t.Fatal(err)
			}
			cur := decodeCRD(t, data, f)
			for _, i := range crdcompat.CRDs(old, cur) {
				t.Errorf("%s %s, since %s", cur.Spec.Names.Kind, i, last.version)
			}
		})
		compared++
	}
	if compared == 0 {
		t.Fatalf("%s has no CRD files in %s", ref, crdDir)
	}
}

func decodeCRD(t *testing.T, data []byte, where string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if crd.Kind != "CustomResourceDefinition" || len(crd.Spec.Versions) == 0 {
		t.Fatalf("%s: not a CRD with versions", where)
	}
	return &crd
}
