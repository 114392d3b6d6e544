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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tool on a fake measurement: the output passes through, the figures
// of both streams make the page; a failed run, or one without figures,
// leaves the page as it was and says why.
func TestRun(t *testing.T) {
	page := filepath.Join(t.TempDir(), "figures", "chaos.md")
	flags := []string{"--page", page, "--title", "The chaos run", "--command", "make chaos", "--intro", "Kills and duplicates.", "--"}
	figuresRun := func(script string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		status := run(append(flags, "sh", "-c", script), nil, &stdout, &stderr)
		return status, stdout.String(), stderr.String()
	}

	status, stdout, stderr := figuresRun("echo starting; echo chaos: kills=6 duplicates=0; echo chaos: kills=7 duplicates=0; echo edge-chaos: seed 1 >&2; printf 'writecost: median=21.8' >&2")
	if status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	if want := "starting\nchaos: kills=6 duplicates=0\nchaos: kills=7 duplicates=0\n"; stdout != want {
		t.Errorf("stdout %q, want it passed through: %q", stdout, want)
	}
	if !strings.HasPrefix(stderr, "edge-chaos: seed 1\nwritecost: median=21.8") {
		t.Errorf("stderr %q, want it passed through", stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	written := string(b)
	for _, want := range []string{
		"# The chaos run\n\n<!-- Written by `make chaos`: run it again",
		"\n`make chaos`, ",
		"\nKills and duplicates.\n",
		"\n## chaos\n\n| kills | duplicates |\n| --- | --- |\n| 6 | 0 |\n| 7 | 0 |\n",
		"\n## writecost\n\n| median |\n| --- |\n| 21.8 |\n",
	} {
		if !strings.Contains(written, want) {
			t.Errorf("page lacks %q:\n%s", want, written)
		}
	}

	for _, tc := range []struct {
		name, script string
		status       int
		says         string
	}{
		{"a failed run", "echo chaos: kills=1 duplicates=3; exit 3", 3, "exit status 3"},
		{"a run killed", "echo chaos: kills=1; kill -9 $$", 128 + 9, "signal: killed"},
		{"a run without figures", "echo done", 1, "no figure line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, stderr := figuresRun(tc.script)
			if status != tc.status || !strings.Contains(stderr, tc.says) || !strings.Contains(stderr, "not written") {
				t.Errorf("status %d, stderr %q; want %d and %q", status, stderr, tc.status, tc.says)
			}
			if b, _ := os.ReadFile(page); string(b) != written {
				t.Errorf("the page changed:\n%s", b)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	page := filepath.Join(t.TempDir(), "p.md")
	for _, args := range [][]string{
		{"--page", page, "--title", "T", "--command", "make x"},
		{"--page", page, "--title", "T", "--", "true"},
		{"--no-such-flag"},
	} {
		var stderr bytes.Buffer
		if status := run(args, nil, &bytes.Buffer{}, &stderr); status != 2 {
			t.Errorf("%q: status %d, want 2 (%s)", args, status, stderr.String())
		}
	}
	var stderr bytes.Buffer
	if status := run([]string{"--page", page, "--title", "T", "--command", "make x", "--", "/no/such/command"}, nil, &bytes.Buffer{}, &stderr); status != 127 {
		t.Errorf("a command that cannot start: status %d, want 127 (%s)", status, stderr.String())
	}
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Errorf("a page written: %v", err)
	}
}
