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

// Package figures writes the figures of a measurement run as a Markdown
// page of docs/figures: the command that made them, when, at which
// commit and on what machine, then the tables. A run writes its page
// whole each time, so the page holds the latest run's figures and the
// docs link to it rather than copy them.
package figures

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Stamp says when, at which commit and on what machine figures were made.
type Stamp struct{ Date, Commit, Machine string }

// Now is the stamp of a run made now in the repository at root. The
// commit is "-dirty" when the code differs from it; Markdown does not
// count, since the figures pages and the docs change while runs are made.
func Now(root string) Stamp {
	commit := "unknown"
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if head, err := git("rev-parse", "--short=7", "HEAD"); err == nil {
		commit = head
		if changed, err := git("status", "--porcelain", "--", ".", ":(exclude)*.md"); err != nil || changed != "" {
			commit += "-dirty"
		}
	}
	return Stamp{Date: time.Now().UTC().Format("2006-01-02"), Commit: commit, Machine: machine()}
}

// machine is the machine's cores, memory and platform.
func machine() string {
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kib int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kib); err == nil {
			mem = fmt.Sprintf(", %d GiB", (kib+(1<<19))>>20)
		}
	}
	return fmt.Sprintf("%d cores%s, %s/%s", runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH)
}

// Table is a Markdown table.
type Table struct {
	Header []string
	Rows   [][]string
}

// String is the table in Markdown.
func (t Table) String() string {
	var b strings.Builder
	row := func(cells []string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	row(t.Header)
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---"
	}
	row(sep)
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// Page is one run's figures.
type Page struct {
	Title, Command string
	Stamp          Stamp
	// Intro says what the figures are, in a sentence or two.
	Intro string
	// Sections are the page's parts, in Markdown (tables, lines).
	Sections []string
}

// Markdown is the page as written.
func (p Page) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", p.Title)
	fmt.Fprintf(&b, "<!-- Written by `%s`: run it again to replace these figures; do not edit. -->\n\n", p.Command)
	fmt.Fprintf(&b, "`%s`, %s, commit %s, %s.\n", p.Command, p.Stamp.Date, p.Stamp.Commit, p.Stamp.Machine)
	if p.Intro != "" {
		fmt.Fprintf(&b, "\n%s\n", p.Intro)
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, "\n%s", strings.TrimRight(s, "\n")+"\n")
	}
	return b.String()
}

// Write writes the page to path, making its directory.
func (p Page) Write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(p.Markdown()), 0o644)
}
