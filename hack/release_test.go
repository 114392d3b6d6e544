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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestReleaseRefuses runs hack/release.sh with what it must refuse before
// it builds anything: no version, a version not vX.Y.Z, a version
// CHANGELOG.md has no section for.
func TestReleaseRefuses(t *testing.T) {
	for _, tt := range []struct{ version, says string }{
		{"", "no version: make release VERSION=vX.Y.Z"},
		{"0.1.0", "VERSION=0.1.0 is not vX.Y.Z"},
		{"v0.1", "VERSION=v0.1 is not vX.Y.Z"},
		{"v01.0.0", "VERSION=v01.0.0 is not vX.Y.Z"},
		{"v999.0.0", `CHANGELOG.md has no section "## 999.0.0"`},
	} {
		cmd := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "hack", "release.sh"), tt.version)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.says) {
			t.Errorf("hack/release.sh %q: %v, said %q; want a refusal saying %q", tt.version, err, out, tt.says)
		}
	}
}

// TestReleasesInChangelog checks that every release hack/releases.tsv
// records has its section in CHANGELOG.md, "## X.Y.Z" (with a date or in
// brackets), as make release requires, and that "## Unreleased" comes
// first.
func TestReleasesInChangelog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`(?m)^## \[?([^\]\s]+)\]?(?: - \d{4}-\d{2}-\d{2})?$`)
	var sections []string
	for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
		sections = append(sections, m[1])
	}
	if len(sections) == 0 || sections[0] != "Unreleased" {
		t.Errorf("CHANGELOG.md's first section is %v; want \"## Unreleased\"", sections)
	}
	for _, r := range releases(t) {
		found := false
		for _, s := range sections {
			found = found || s == strings.TrimPrefix(r.version, "v")
		}
		if !found {
			t.Errorf("%s records %s, and CHANGELOG.md has no section \"## %s\"", releasesFile, r.version, strings.TrimPrefix(r.version, "v"))
		}
	}
}
