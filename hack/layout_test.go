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
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/test/framework/testenv"
)

const module = "github.com/edgeplane/edgeplane"

// product are the folders whose packages ship (docs/architecture.md, "Layout").
var product = []string{"api", "cmd", "controllers", "apiserver", "internal"}

// harness reports whether a package is test or development machinery: the
// test framework, suites and chaos runs under test/, the tools under hack/,
// and the test libraries they are built on.
func harness(pkg string) bool {
	return strings.HasPrefix(pkg, module+"/test/") || strings.HasPrefix(pkg, module+"/hack/") ||
		strings.HasPrefix(pkg, "github.com/onsi/") ||
		strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime/pkg/envtest")
}

// TestProductImportsNoHarness lists every product package with everything
// it links (tests excluded) and fails on any harness among them: what
// ships never carries the test framework, and internal/ never imports
// test/.
func TestProductImportsNoHarness(t *testing.T) {
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}
	for _, p := range product {
		args = append(args, "./"+p+"/...")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		if !slices.ContainsFunc(product, func(p string) bool { return strings.HasPrefix(pkg, module+"/"+p) }) {
			t.Errorf("go list named %s, outside the product folders", pkg)
		}
		seen++
		for _, d := range deps {
			if harness(d) {
				t.Errorf("%s links %s, a harness", pkg, d)
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list named %d product packages; expected the whole product", seen)
	}
}

// TestGoFilesAreFormatted fails on any Go file gofmt would change.
func TestGoFilesAreFormatted(t *testing.T) {
	cmd := exec.Command("gofmt", "-l", ".")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gofmt: %v", err)
	}
	if files := strings.TrimSpace(string(out)); files != "" {
		t.Errorf("not gofmt-formatted (run gofmt -w):\n%s", files)
	}
}
