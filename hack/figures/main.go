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

// Command figures runs a measurement and writes its figures as a page of
// docs/figures (test/framework/figures), so that the docs link to the
// latest run's figures instead of copying them:
//
//	go run ./hack/figures --page docs/figures/chaos.md --title "The chaos run" \
//		--command "make chaos" [--intro "..."] -- go run ./hack/chaos ...
//
// The command's output passes through unchanged; its figure lines (parse.go:
// "prefix: key=value ..." and Go benchmark results, on standard output or
// standard error) become the page's tables, stamped with the date, commit
// and machine of the run's start. A command that fails, or prints no
// figure line, writes no page: the figures of the last good run stay. The
// tool exits with the command's status.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/edgeplane/edgeplane/test/framework/figures"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	page := fs.String("page", "", "The page written, e.g. docs/figures/chaos.md.")
	title := fs.String("title", "", "The page's title.")
	command := fs.String("command", "", "The command a reader runs to make the page again, e.g. \"make scale NODES=5000\".")
	intro := fs.String("intro", "", "A sentence or two saying what the figures are.")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: figures --page FILE --title TITLE --command \"make ...\" [--intro TEXT] -- COMMAND ARGS...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *page == "" || *title == "" || *command == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "figures: --page, --title, --command and the command after -- are needed")
		fs.Usage()
		return 2
	}

	stamp := figures.Now(".")
	var f found
	status, err := measure(fs.Args(), stdin, stdout, stderr, &f)
	if err != nil {
		fmt.Fprintf(stderr, "figures: %v; %s not written, the figures of the last good run stay\n", err, *page)
		return status
	}
	sections, err := f.sections()
	if err != nil {
		fmt.Fprintf(stderr, "figures: %v; %s not written\n", err, *page)
		return 1
	}
	p := figures.Page{Title: *title, Command: *command, Stamp: stamp, Intro: *intro, Sections: sections}
	if err := p.Write(*page); err != nil {
		fmt.Fprintf(stderr, "figures: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "figures: wrote %s\n", *page)
	return 0
}
