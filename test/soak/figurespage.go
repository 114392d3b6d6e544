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

package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/figures"
)

// writeFiguresPage writes the run's figures as a page of docs/figures
// (cfg.FiguresPage): its last line, the readers' latencies, the table of
// every series, and the plots, copied from cfg.Out into a folder named
// as the page, which the run empties first.
func writeFiguresPage(cfg Config, res Result, table, readers string) error {
	plots := strings.TrimSuffix(cfg.FiguresPage, ".md")
	if err := os.RemoveAll(plots); err != nil {
		return err
	}
	if err := os.MkdirAll(plots, 0o755); err != nil {
		return err
	}
	svgs, err := filepath.Glob(filepath.Join(cfg.Out, "*.svg"))
	if err != nil {
		return err
	}
	slices.Sort(svgs)
	var images strings.Builder
	for _, svg := range svgs {
		b, err := os.ReadFile(svg)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(plots, filepath.Base(svg)), b, 0o644); err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(svg), ".svg")
		fmt.Fprintf(&images, "![%s](%s/%s)\n", name, filepath.Base(plots), filepath.Base(svg))
	}
	page := figures.Page{
		Title:   "The soak run",
		Command: SoakCommand(cfg),
		Stamp:   figures.Now(testenv.RepoRoot()),
		Intro:   "What the run does and how each series is judged: [docs/soak.md](../soak.md).",
		Sections: []string{
			"## The run's line\n\n```text\n" + res.Line() + "\n" + readers + "\n```\n",
			"## Every series\n\nEach series after the warm-up, fitted by least squares; of a bounded series, how far it went past its bound.\n\n```text\n" + table + "```\n",
			"## Plots\n\n" + images.String(),
		},
	}
	return page.Write(cfg.FiguresPage)
}

// SoakCommand is the make command of a run of cfg.
func SoakCommand(cfg Config) string {
	return fmt.Sprintf("make soak DURATION=%gm NODES=%d", cfg.Duration.Minutes(), cfg.Nodes)
}
