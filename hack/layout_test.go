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
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

const module = "github.com/edgeplane/edgeplane"

// product are the folders whose packages ship (docs/architecture.md, "Layout").
var product = []string{"api", "cmd", "controllers", "apiserver", "internal"}

// harness reports whether a package is test or development machinery: the
// test framework, suites and chaos runs under test/, the tools under hack/,
// the product suites' own support under internal/test/, and the test
// libraries they are built on.
func harness(pkg string) bool {
	return strings.HasPrefix(pkg, module+"/test/") || strings.HasPrefix(pkg, module+"/hack/") ||
		strings.HasPrefix(pkg, module+"/internal/test/") ||
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
		if harness(pkg) {
			continue // internal/test: the suites' support, linked by tests only
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

// modules are the folders of the modules go.work joins: the product and
// the harnesses beside it (docs/design/0032-harnesses-in-modules-of-their-own.md).
var modules = []string{".", "hack", "test"}

// TestProductModuleStandsAlone lists what the shipped binaries link with
// the workspace off and on: the product module builds without either
// harness module, and the suites, which run in the workspace, build the
// binaries from the module versions that ship (go work sync keeps them
// so).
func TestProductModuleStandsAlone(t *testing.T) {
	linked := func(gowork string) []string {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./cmd/...")
		cmd.Dir = testenv.RepoRoot()
		cmd.Env = append(os.Environ(), "GOWORK="+gowork)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOWORK=%s go list ./cmd/...: %v\n%s", gowork, err, stderr(err))
		}
		mods := strings.Fields(strings.ReplaceAll(string(out), " ", "@"))
		slices.Sort(mods)
		return slices.Compact(mods)
	}
	alone, workspace := linked("off"), linked("")
	if !slices.Equal(alone, workspace) {
		t.Errorf("the binaries link other module versions in the workspace than alone (run go work sync):\nalone:     %v\nworkspace: %v", alone, workspace)
	}
	if len(alone) < 10 {
		t.Fatalf("the binaries link %d modules; expected the product's dependencies", len(alone))
	}
}

// TestModulesAreTidy fails when a module's go.mod or go.sum is not what go
// mod tidy makes of it: a harness dependency in the product module, or a
// requirement nothing uses, shows here.
func TestModulesAreTidy(t *testing.T) {
	for _, m := range modules {
		cmd := exec.Command("go", "mod", "tidy", "-diff")
		cmd.Dir = filepath.Join(testenv.RepoRoot(), m)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go mod tidy -diff in %s: %v (run go mod tidy there, then go work sync)\n%s", m, err, out)
		}
	}
}

// processes are internal/'s groups by the process that runs them, each
// with the groups it may import (docs/architecture.md, "Layout"): a path
// says which process runs the code, and no process links another's.
var processes = map[string][]string{
	"internal/agent":   {"internal/agent", "internal/shared"},
	"internal/hub":     {"internal/hub", "internal/shared"},
	"internal/cli":     {"internal/cli", "internal/shared"},
	"internal/shared":  {"internal/shared"},
	"controllers":      {"internal/manager/index", "internal/shared"},
	"apiserver":        {"internal/manager/index", "internal/shared"},
	"internal/manager": {"internal/manager", "internal/hub", "internal/shared"},
}

// TestInternalGroupedByProcess fails when a package of one process's
// group imports another's internal/ package, or when a package sits in
// internal/ outside every group.
func TestInternalGroupedByProcess(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./internal/...", "./controllers/...", "./apiserver/...")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	in := func(pkg, folder string) bool { return pkg == folder || strings.HasPrefix(pkg, folder+"/") }
	groupOf := func(pkg string) string {
		for g := range processes {
			if in(pkg, g) {
				return g
			}
		}
		return ""
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		if in(pkg, "internal/test") {
			continue // the suites' support, linked by tests only
		}
		g := groupOf(pkg)
		if g == "" {
			t.Errorf("%s is in no process's group of internal/ (agent, hub, cli, manager, shared)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			imp, ok := strings.CutPrefix(imp, module+"/")
			if !ok || !in(imp, "internal") {
				continue
			}
			if !slices.ContainsFunc(processes[g], func(allowed string) bool { return in(imp, allowed) }) {
				t.Errorf("%s (%s) imports %s, another process's package", pkg, g, imp)
			}
		}
	}
}

// Each reconciler is a package of its own under controllers/, so that a
// kind's code and its unit tests sit where a reader looks for them:
// controllers/ itself sets them up and holds no Reconcile.
func TestOneReconcilerPerPackage(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(), "controllers")
	byDir := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Reconcile" {
				dir, _ := filepath.Rel(root, filepath.Dir(path))
				byDir[dir] = append(byDir[dir], filepath.Base(path))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(byDir) == 0 {
		t.Fatal("no Reconcile method found under controllers/")
	}
	for dir, files := range byDir {
		switch {
		case dir == ".":
			t.Errorf("controllers/ declares Reconcile (%s): each kind's reconciler goes in a package of its own", strings.Join(files, ", "))
		case len(files) > 1:
			t.Errorf("controllers/%s declares %d reconcilers (%s): one package per kind", dir, len(files), strings.Join(files, ", "))
		}
	}
}
