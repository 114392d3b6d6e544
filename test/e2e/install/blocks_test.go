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

package install

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// block is one ```sh block of a page: what a reader pastes into a shell.
type block struct {
	// where is the page and the line of the opening fence, for messages.
	where string
	// script is the block's commands: with "$ " prompts, only the
	// prompted lines (and their continuations), prompts taken off.
	script string
}

// shellBlocks are the ```sh blocks of md, in order, or of the section
// under the heading section ("## Install on a device": up to the next
// heading of its level or above) when section is given. A block indented
// in a list loses the fence's indentation. Blocks of other languages
// (```console transcripts, ```yaml) are not commands and are left out.
func shellBlocks(page, md, section string) ([]block, error) {
	lines := strings.Split(md, "\n")
	from, to := 0, len(lines)
	if section != "" {
		level := len(section) - len(strings.TrimLeft(section, "#"))
		from = slices.Index(lines, section)
		if from < 0 {
			return nil, fmt.Errorf("%s has no heading %q", page, section)
		}
		for i := from + 1; i < len(lines); i++ {
			if h := len(lines[i]) - len(strings.TrimLeft(lines[i], "#")); h > 0 && h <= level && strings.HasPrefix(lines[i][h:], " ") {
				to = i
				break
			}
		}
	}
	var out []block
	for i := from; i < to; i++ {
		trimmed := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		lang := strings.Fields(strings.TrimPrefix(trimmed, "```") + " x")[0]
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var body []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			l := lines[j]
			if n := len(l) - len(strings.TrimLeft(l, " ")); n >= indent {
				l = l[indent:]
			} else {
				l = strings.TrimLeft(l, " ")
			}
			body = append(body, l)
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fence is never closed", page, i+1)
		}
		if lang == "sh" {
			out = append(out, block{where: fmt.Sprintf("%s:%d", page, i+1), script: commands(body)})
		}
		i = j
	}
	return out, nil
}

// commands are a block's lines to run. A block with "$ " prompts is a
// transcript: its prompted lines and their continuations are commands,
// the rest is what they printed.
func commands(lines []string) string {
	prompted := slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "$ ") })
	var b strings.Builder
	continued := false
	for _, l := range lines {
		switch {
		case !prompted || continued:
		case strings.HasPrefix(l, "$ "):
			l = strings.TrimPrefix(l, "$ ")
		default:
			continue
		}
		continued = prompted && strings.HasSuffix(l, "\\")
		b.WriteString(l + "\n")
	}
	return b.String()
}

// setOwn gives the variables that a block sets at the start of a line
// ("export NAME=value" or "NAME=value") this machine's values, as
// install.md asks its reader to ("set them once, to your own"), and says
// which of vars the block does not set.
func setOwn(script string, vars map[string]string) (string, []string) {
	var missing []string
	for name, value := range vars {
		re := regexp.MustCompile(`(?m)^(\s*(?:export\s+)?` + regexp.QuoteMeta(name) + `=)\S+`)
		if !re.MatchString(script) {
			missing = append(missing, name)
			continue
		}
		script = re.ReplaceAllString(script, "${1}"+strings.ReplaceAll(shellQuote(value), "$", "$$"))
	}
	slices.Sort(missing)
	return script, missing
}

// joinPrefix opens the line kubectl edge node add prints and the device
// runs.
const joinPrefix = "edge-agent join "

// printedJoin is the last join line in a block's output.
func printedJoin(out string) string {
	line := ""
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, joinPrefix) {
			line = l
		}
	}
	return line
}

// withPrintedJoin replaces each join line of a device's block, whose
// --hub, --token and --ca-cert-hash stand for what kubectl edge node add
// printed, with the printed line, keeping the block's own flags that the
// printed line does not carry (--run=false): the doc's "run the printed
// line with --run=false". It says whether the block had a join line.
func withPrintedJoin(script, printed string) (string, bool) {
	found := false
	var b strings.Builder
	for l := range strings.Lines(script) {
		trimmed := strings.TrimSpace(l)
		if !strings.HasPrefix(trimmed, joinPrefix) {
			b.WriteString(l)
			continue
		}
		found = true
		given := map[string]bool{}
		for _, f := range strings.Fields(printed) {
			if name, ok := flagName(f); ok {
				given[name] = true
			}
		}
		var own []string
		fields := strings.Fields(strings.TrimPrefix(trimmed, joinPrefix))
		for i := 0; i < len(fields); i++ {
			name, ok := flagName(fields[i])
			if !ok {
				continue
			}
			takesValue := !strings.Contains(fields[i], "=") && i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-")
			if !given[name] {
				own = append(own, fields[i])
				if takesValue {
					own = append(own, fields[i+1])
				}
			}
			if takesValue {
				i++
			}
		}
		b.WriteString(joinPrefix + strings.Join(own, " ") + " " + strings.TrimPrefix(printed, joinPrefix) + "\n")
	}
	return b.String(), found
}

// flagName is the name of a --flag or --flag=value field.
func flagName(field string) (string, bool) {
	if !strings.HasPrefix(field, "--") {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(field, "--"), "=")
	return name, true
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestShellBlocks(t *testing.T) {
	md := "# P\n\n```sh\nexport A=1\n```\n\n## Install on a device\n\n1. Add it:\n\n   ```sh\n   $ kubectl edge node add n \\\n       --type linux\n   edge-agent join --hub x\n   ```\n\n   ```console\n   $ not run\n   ```\n\n### Inside\n\n```sh\necho inside\n```\n\n## Next\n\n```sh\necho next\n```\n"
	got, err := shellBlocks("p.md", md, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []block{{"p.md:3", "export A=1\n"}, {"p.md:11", "kubectl edge node add n \\\n    --type linux\n"}, {"p.md:23", "echo inside\n"}, {"p.md:29", "echo next\n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shellBlocks = %q, want %q", got, want)
	}
	got, err = shellBlocks("p.md", md, "## Install on a device")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want[1:3]) {
		t.Errorf("the section's shellBlocks = %q, want %q", got, want[1:3])
	}
	if _, err := shellBlocks("p.md", md, "## Missing"); err == nil {
		t.Error("a missing section gives no error")
	}

	script, missing := setOwn("export VERSION=v0.1.0    # the release\nexport NS=edgeplane-system\nARCH=arm64\n", map[string]string{"VERSION": "v9.9.9", "NS": "it's", "ARCH": "amd64", "HUB_URL": "x"})
	if want := "export VERSION='v9.9.9'    # the release\nexport NS='it'\\''s'\nARCH='amd64'\n"; script != want || !reflect.DeepEqual(missing, []string{"HUB_URL"}) {
		t.Errorf("setOwn = %q, %v; want %q, [HUB_URL]", script, missing, want)
	}

	printed := printedJoin("edgenode/n created\nedge-agent join --hub https://127.0.0.1:4 --token a.b --ca-cert-hash sha256:c\n")
	script, found := withPrintedJoin("install x y\n  edge-agent join --run=false --hub https://h:443 --token 7f.0p --ca-cert-hash sha256:5b1e…\nsystemctl start z\n", printed)
	if want := "install x y\nedge-agent join --run=false --hub https://127.0.0.1:4 --token a.b --ca-cert-hash sha256:c\nsystemctl start z\n"; !found || script != want {
		t.Errorf("withPrintedJoin = %q, %t; want %q", script, found, want)
	}
}
