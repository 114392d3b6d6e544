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

// Package reference generates the references of docs/reference from the
// code: the CRD reference from the API types (crd-ref-docs), the facade's
// from its OpenAPI document and the commands' from their flag sets.
// make docs writes them; a test in hack/ fails when the committed ones
// differ from a fresh generation.
package reference

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Files are the files Write generates, in docs/reference.
var Files = []string{"api.md", "facade.md", "commands.md"}

// Write generates every reference of the repository at root into dir.
func Write(root, dir string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := API(root, filepath.Join(dir, "api.md")); err != nil {
		return err
	}
	spec, err := os.ReadFile(filepath.Join(root, "apiserver", "openapi.json"))
	if err != nil {
		return err
	}
	facade, err := Facade(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "facade.md"), facade, 0o644); err != nil {
		return err
	}
	commands, err := Commands(root)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "commands.md"), commands, 0o644)
}

// API writes the CRD reference of api/ to out with crd-ref-docs, the
// version hack/tool.sh pins, built into the tools cache on first use,
// with the configuration and templates of hack/docs.
func API(root, out string) error {
	tool, err := exec.Command(filepath.Join(root, "hack", "tool.sh"), "crd-ref-docs").Output()
	if err != nil {
		return fmt.Errorf("hack/tool.sh crd-ref-docs: %w%s", err, stderrOf(err))
	}
	cmd := exec.Command(strings.TrimSpace(string(tool)),
		"--source-path", filepath.Join(root, "api"),
		"--config", filepath.Join(root, "hack", "docs", "crd-ref-docs.yaml"),
		"--templates-dir", filepath.Join(root, "hack", "docs", "templates"),
		"--renderer", "markdown",
		"--output-path", out,
		"--log-level", "ERROR")
	cmd.Dir = root
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("crd-ref-docs: %w\n%s", err, output.Bytes())
	}
	// crd-ref-docs leaves blank lines where template actions were;
	// runs of them are squeezed to one, and trailing spaces dropped.
	data, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	return os.WriteFile(out, tidy(data), 0o644)
}

// tidy drops trailing spaces and squeezes runs of blank lines outside
// code blocks, leaving one newline at the end.
func tidy(data []byte) []byte {
	var b bytes.Buffer
	blank, fenced := false, false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, " \t")
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if line == "" && !fenced {
			if blank || b.Len() == 0 {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

func stderrOf(err error) string {
	if e, ok := err.(*exec.ExitError); ok && len(e.Stderr) > 0 {
		return "\n" + string(e.Stderr)
	}
	return ""
}
