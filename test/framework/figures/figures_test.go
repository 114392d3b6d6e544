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

package figures

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPage(t *testing.T) {
	p := Page{
		Title: "Beside plain Kubernetes", Command: "make scale-peer NODES=250",
		Stamp:    Stamp{Date: "2026-11-27", Commit: "abc1234", Machine: "2 cores, 24 GiB, linux/amd64"},
		Intro:    "Two runs.",
		Sections: []string{Table{Header: []string{"pair", "time"}, Rows: [][]string{{"1", "60.1 s"}}}.String()},
	}
	want := "# Beside plain Kubernetes\n\n" +
		"<!-- Written by `make scale-peer NODES=250`: run it again to replace these figures; do not edit. -->\n\n" +
		"`make scale-peer NODES=250`, 2026-11-27, commit abc1234, 2 cores, 24 GiB, linux/amd64.\n\n" +
		"Two runs.\n\n" +
		"| pair | time |\n| --- | --- |\n| 1 | 60.1 s |\n"
	if got := p.Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
	path := filepath.Join(t.TempDir(), "figures", "p.md")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("written: %q", b)
	}
	if s := Now(".").Machine; !strings.Contains(s, "cores") {
		t.Errorf("machine %q", s)
	}
}

// The commit of a stamp is dirty when code changed, not when Markdown did:
// pages are written and docs edited while the runs are made.
func TestNowDirtyOnlyWithCode(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("main.go", "package main\n")
	write("docs/a.md", "# A\n")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	head := git("rev-parse", "--short=7", "HEAD")
	for _, step := range []struct {
		name, file, want string
	}{
		{"clean", "", head},
		{"a page of docs changed", "docs/a.md", head},
		{"a new page", "docs/figures/b.md", head},
		{"code changed", "main.go", head + "-dirty"},
	} {
		if step.file != "" {
			write(step.file, "changed\n")
		}
		if got := Now(dir).Commit; got != step.want {
			t.Errorf("%s: commit %q, want %q", step.name, got, step.want)
		}
	}
}
