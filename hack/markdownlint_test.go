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
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestMarkdownLint runs markdownlint-cli2 (hack/markdownlint.sh, pinned by
// hack/markdownlint/package-lock.json) over the repository's Markdown with
// the rules of .markdownlint-cli2.jsonc, and fails on what it finds.
func TestMarkdownLint(t *testing.T) {
	root := testenv.RepoRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "markdownlint.sh")).Output()
	if err != nil {
		t.Fatalf("hack/markdownlint.sh: %v (%s)", err, stderr(err))
	}
	lint := exec.CommandContext(ctx, strings.TrimSpace(string(out)))
	lint.Dir = root
	if res, err := lint.CombinedOutput(); err != nil {
		t.Errorf("markdownlint-cli2 (rules in .markdownlint-cli2.jsonc): %v\n%s", err, res)
	}
}

// stderr is what a failed command printed on its standard error.
func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
