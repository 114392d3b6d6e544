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

package reference

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	agentflags "github.com/edgeplane/edgeplane/cmd/edge-agent/flags"
	managerflags "github.com/edgeplane/edgeplane/cmd/manager/flags"
	"github.com/edgeplane/edgeplane/internal/cli/kubectledge"
)

// Commands renders the command-line reference of manager, edge-agent and
// kubectl edge from the flag sets the commands parse; root is the
// repository, whose cmd/*/main.go give each command's introduction.
func Commands(root string) ([]byte, error) {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Command-line reference\n\n%s\n", generatedNote("the flag sets of cmd/manager, cmd/edge-agent and cmd/kubectl-edge"))
	b.WriteString("- [manager](#manager): the controllers and the `/api/v1` facade.\n" +
		"- [edge-agent](#edge-agent): the agent of an edge node, and [edge-agent join](#edge-agent-join).\n" +
		"- [kubectl edge](#kubectl-edge): the kubectl plugin.\n\n" +
		"manager and edge-agent parse their flags with Go's flag package: `--name=value` or `--name value`, a boolean as `--name` or `--name=false`, " +
		"with one dash or two. kubectl edge parses them as kubectl does. A default shown empty is the empty value.\n\n")

	for _, c := range []struct{ name, dir string }{{"manager", "manager"}, {"edge-agent", "edge-agent"}} {
		intro, err := packageDoc(filepath.Join(root, "cmd", c.dir, "main.go"))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(b, "## %s\n\n%s\n```text\n%s [flags]\n```\n\n", c.name, intro, c.name)
		var fs *flag.FlagSet
		if c.name == "manager" {
			fs, _ = managerflags.NewFlagSet()
		} else {
			fs, _ = agentflags.NewFlagSet(c.name, false)
		}
		goFlags(b, fs, nil)
	}
	plain, _ := agentflags.NewFlagSet("edge-agent", false)
	join, _ := agentflags.NewFlagSet("edge-agent join", true)
	b.WriteString("### edge-agent join\n\n" +
		"Joins the device to the edge hub with a one-time token, saves the node's identity in `<state-dir>/hub` and, unless `--run=false`, " +
		"runs the agent through the hub. `join` comes before the flags. It takes the flags of [edge-agent](#edge-agent) and these:\n\n" +
		"```text\nedge-agent join --hub https://HOST:PORT --token ID.SECRET --ca-cert-hash sha256:<hex> [flags]\n```\n\n")
	goFlags(b, join, func(f *flag.Flag) bool { return plain.Lookup(f.Name) == nil })

	cmd := kubectledge.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	cmd.InitDefaultVersionFlag()
	kubectlCommands(b, cmd)
	return []byte(strings.TrimRight(b.String(), "\n") + "\n"), nil
}

// packageDoc is the doc comment of the package of a Go file, as Markdown
// paragraphs of plain text.
func packageDoc(file string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if f.Doc == nil {
		return "", fmt.Errorf("%s: no package doc comment", file)
	}
	var paras []string
	for _, p := range strings.Split(strings.TrimSpace(f.Doc.Text()), "\n\n") {
		paras = append(paras, text(p))
	}
	return strings.Join(paras, "\n\n") + "\n", nil
}

// goFlags writes a table of a Go flag set's flags, those keep lets
// through, by name.
func goFlags(b *strings.Builder, fs *flag.FlagSet, keep func(*flag.Flag) bool) {
	b.WriteString("| Flag | Type | Default | Description |\n| --- | --- | --- | --- |\n")
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f) {
			return
		}
		typ, usage := flag.UnquoteUsage(f)
		switch typ {
		case "":
			typ = "bool"
		case "value":
			typ = "string"
		}
		fmt.Fprintf(b, "| `--%s` | %s | %s | %s |\n", f.Name, typ, defaultValue(f.DefValue), cell(usage))
	})
	b.WriteString("\n")
}

// kubectlCommands writes a section of each command of the cobra tree
// under c, depth first: global flags under the root, each command's own
// flags under it.
func kubectlCommands(b *strings.Builder, c *cobra.Command) {
	if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
		return
	}
	level := "###"
	if !c.HasParent() {
		level = "##"
	}
	c.InheritedFlags() // merges the parents' flags in, as running the command does: UseLine counts them
	fmt.Fprintf(b, "%s %s\n\n", level, c.CommandPath())
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	fmt.Fprintf(b, "%s\n\n```text\n%s\n```\n\n", text(ensurePeriod(desc)), c.UseLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "Aliases: %s.\n\n", code(strings.Join(c.Aliases, ", ")))
	}
	if c.Example != "" {
		fmt.Fprintf(b, "Example:\n\n```sh\n%s\n```\n\n", strings.Trim(c.Example, "\n"))
	}
	var fs *pflag.FlagSet
	switch {
	case !c.HasParent():
		pflags(b, c.LocalNonPersistentFlags())
		b.WriteString("Global flags, which every command below takes too (kubectl's, for the cluster, the user and the namespace):\n\n")
		fs = c.PersistentFlags()
	default:
		// Its own flags and those of the commands between it and the
		// root; the root's global flags are listed once, above.
		fs = pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
		fs.AddFlagSet(c.LocalFlags())
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if c.Root().PersistentFlags().Lookup(f.Name) == nil {
				fs.AddFlag(f)
			}
		})
	}
	pflags(b, fs)
	for _, sub := range c.Commands() {
		kubectlCommands(b, sub)
	}
}

// pflags writes a table of a pflag set's visible flags, by name; nothing
// when there are none.
func pflags(b *strings.Builder, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		typ, usage := pflag.UnquoteUsage(f)
		if typ == "" {
			typ = "bool"
		}
		def := f.DefValue
		if def == "[]" {
			def = ""
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |\n", name, typ, defaultValue(def), cell(usage)))
	})
	if len(rows) == 0 {
		return
	}
	b.WriteString("| Flag | Type | Default | Description |\n| --- | --- | --- | --- |\n")
	b.WriteString(strings.Join(rows, ""))
	b.WriteString("\n")
}

// defaultValue is a flag's default as the reference shows it, the same on
// every machine: the home directory as $HOME, the architecture the binary
// was built for as GOARCH.
func defaultValue(v string) string {
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		if v == home || strings.HasPrefix(v, home+string(filepath.Separator)) {
			v = "$HOME" + strings.TrimPrefix(v, home)
		}
	}
	if v == goruntime.GOARCH {
		return "the binary's `GOARCH`"
	}
	return code(v)
}

func ensurePeriod(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}
