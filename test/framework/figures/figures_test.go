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
