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
	"cmp"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/edgeplane/edgeplane/test/framework/figures"
)

// A figure line is one of two kinds, each a row of a table:
//
//   - a harness's figures, "prefix: key=value key=value ...": a table per
//     prefix, a column per key in the order the keys were first seen;
//   - a Go benchmark's result, "BenchmarkName-2   3   123 ns/op   4.5 writes/op":
//     a table per package (go test's "pkg:" line before the results, or
//     its "ok" line after), with the benchmark, its iterations and a
//     column per unit.
//
// Every other line is not a figure. A line go test printed from a test's
// log ("    outage_test.go:198: outage: ...") is read past that prefix.
var (
	testLog   = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)
	goPackage = regexp.MustCompile(`^pkg: (\S+)$`)
	goDone    = regexp.MustCompile(`^(?:ok|FAIL)\s+(\S+)`)
)

// errNoFigures is a run that printed no figure line: its page would be empty.
var errNoFigures = errors.New("the command printed no figure line (prefix: key=value ..., or a Go benchmark result)")

// cell is one figure of a row: its column and its value as printed.
type cell struct{ column, value string }

// table gathers the rows of one prefix or one package.
type table struct {
	title   string
	columns []string
	rows    []map[string]string
}

func (t *table) add(cells []cell) {
	row := make(map[string]string, len(cells))
	for _, c := range cells {
		if _, seen := row[c.column]; seen {
			continue
		}
		if !slices.Contains(t.columns, c.column) {
			t.columns = append(t.columns, c.column)
		}
		row[c.column] = c.value
	}
	t.rows = append(t.rows, row)
}

// markdown is the table under a heading of its title; a column a row
// lacks is an empty cell.
func (t *table) markdown() string {
	md := figures.Table{Header: make([]string, len(t.columns))}
	for i, c := range t.columns {
		md.Header[i] = escape(c)
	}
	for _, r := range t.rows {
		row := make([]string, len(t.columns))
		for i, c := range t.columns {
			row[i] = escape(r[c])
		}
		md.Rows = append(md.Rows, row)
	}
	return "## " + t.title + "\n\n" + md.String()
}

// escape keeps a value's pipes from ending its cell.
func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// found is the figures of a run's output, fed a line at a time.
type found struct {
	tables []*table
	byKey  map[string]*table
	// pkg is the package go test prints the benchmarks of, from its
	// "pkg:" line until its "ok" or "FAIL" line.
	pkg string
}

// add reads one line of output, without its newline.
func (f *found) add(line string) {
	line = testLog.ReplaceAllString(line, "")
	if m := goPackage.FindStringSubmatch(line); m != nil {
		f.pkg = m[1]
		return
	}
	if m := goDone.FindStringSubmatch(line); m != nil {
		f.done(m[1])
		return
	}
	if cells, ok := benchmark(line); ok {
		f.table("bench:"+f.pkg, cmp.Or(f.pkg, "benchmarks")).add(cells)
		return
	}
	if prefix, cells, ok := figureLine(line); ok {
		f.table("line:"+prefix, prefix).add(cells)
	}
}

// done ends go test's output of package pkg: results printed before any
// "pkg:" line are that package's.
func (f *found) done(pkg string) {
	if t, ok := f.byKey["bench:"]; ok && f.pkg == "" && f.byKey["bench:"+pkg] == nil {
		delete(f.byKey, "bench:")
		t.title = pkg
		f.byKey["bench:"+pkg] = t
	}
	f.pkg = ""
}

func (f *found) table(key, title string) *table {
	if f.byKey == nil {
		f.byKey = map[string]*table{}
	}
	t, ok := f.byKey[key]
	if !ok {
		t = &table{title: title}
		f.byKey[key] = t
		f.tables = append(f.tables, t)
	}
	return t
}

// sections are the page's tables in the order first seen, or
// errNoFigures.
func (f *found) sections() ([]string, error) {
	if len(f.tables) == 0 {
		return nil, errNoFigures
	}
	s := make([]string, len(f.tables))
	for i, t := range f.tables {
		s[i] = t.markdown()
	}
	return s, nil
}

// figureLine reads a harness's "prefix: key=value ..." line as cells.
func figureLine(line string) (string, []cell, bool) {
	prefix, figs, ok := figures.ParseLine(line)
	cells := make([]cell, len(figs))
	for i, f := range figs {
		cells[i] = cell{f.Key, f.Value}
	}
	return prefix, cells, ok
}

// benchmark reads a Go benchmark's result: its name, its iterations, then
// a value and its unit for each figure.
func benchmark(line string) ([]cell, bool) {
	w := strings.Fields(line)
	if len(w) < 4 || len(w)%2 != 0 || !strings.HasPrefix(w[0], "Benchmark") {
		return nil, false
	}
	if _, err := strconv.ParseUint(w[1], 10, 64); err != nil {
		return nil, false
	}
	cells := []cell{{"benchmark", w[0]}, {"iterations", w[1]}}
	for i := 2; i < len(w); i += 2 {
		if _, err := strconv.ParseFloat(w[i], 64); err != nil {
			return nil, false
		}
		cells = append(cells, cell{w[i+1], w[i]})
	}
	return cells, true
}
