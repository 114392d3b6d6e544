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

package hack

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/edgeplane/edgeplane/hack/docs/reference"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestMarkdownLinks parses every Markdown file of the repository and fails
// on a relative link (or image) whose file does not exist, or whose
// #anchor names no heading of the Markdown file it points to. Links with
// a scheme (https:, mailto:) are not followed.
func TestMarkdownLinks(t *testing.T) {
	root := testenv.RepoRoot()
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") || !slices.Contains(files, "docs/design.md") {
		t.Fatalf("found %d Markdown files, not README.md and docs/design.md among them: %v", len(files), files)
	}
	docs := map[string]*markdownDoc{}
	load := func(rel string) (*markdownDoc, error) {
		if d, ok := docs[rel]; ok {
			return d, nil
		}
		d, err := parseMarkdown(filepath.Join(root, filepath.FromSlash(rel)))
		docs[rel] = d
		return d, err
	}
	links := 0
	for _, rel := range files {
		d, err := load(rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range d.links {
			links++
			if problem := checkLink(root, rel, l.dest, load); problem != "" {
				t.Errorf("%s:%d: link %s: %s", rel, l.line, l.dest, problem)
			}
		}
	}
	t.Logf("%d relative links checked in %d Markdown files", links, len(files))
}

// repoPath is a code span that reads as a path in the repository: under
// one of its top folders (api/ is the facade's routes too: only its Go
// package counts), with no placeholder (<...>, *, {a,b}, NODES, ...),
// and perhaps a Go identifier after the package (`internal/shared/names.Label`).
var (
	repoPath   = regexp.MustCompile(`^(api/v1alpha1|apiserver|cmd|config|controllers|charts|docs|hack|internal|test)(/[a-z0-9_./-]*)?(\.[A-Z][A-Za-z0-9_]*)?$`)
	identifier = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`)
)

// TestMarkdownCodePaths fails on a code span of a Markdown file that
// names a file or folder of the repository that is not there: a file
// moved or renamed without its docs.
func TestMarkdownCodePaths(t *testing.T) {
	root := testenv.RepoRoot()
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rel := range files {
		d, err := parseMarkdown(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.paths {
			n++
			if strings.Contains(p.dest, "..") {
				continue
			}
			path := identifier.ReplaceAllString(p.dest, "")
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err != nil {
				t.Errorf("%s:%d: `%s` is not in the repository", rel, p.line, p.dest)
			}
		}
	}
	t.Logf("%d paths checked in %d Markdown files", n, len(files))
}

// markdownFiles lists the repository's Markdown files, relative to root
// with forward slashes, outside build output, dependencies, test data and
// .git.
func markdownFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			if rel == "dist" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.EqualFold(filepath.Ext(rel), ".md") {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// markdownLink is a relative link's destination and the line it is on.
type markdownLink struct {
	dest string
	line int
}

// markdownDoc is what the links of and into a Markdown file need: its
// relative links, and the anchors of its headings.
type markdownDoc struct {
	links   []markdownLink
	anchors map[string]bool
	// paths are the code spans that name a file or folder of the
	// repository, such as `internal/agent/sim/sim.go`.
	paths []markdownLink
}

func parseMarkdown(path string) (*markdownDoc, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))
	d := &markdownDoc{anchors: map[string]bool{}}
	var slugs reference.Slugger
	err = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest []byte
		switch n := n.(type) {
		case *ast.Heading:
			d.anchors[slugs.Slug(plainText(n, src))] = true
			return ast.WalkContinue, nil
		case *ast.Link:
			dest = n.Destination
		case *ast.Image:
			dest = n.Destination
		case *ast.CodeSpan:
			if p := string(n.Text(src)); repoPath.MatchString(p) {
				d.paths = append(d.paths, markdownLink{dest: p, line: lineOf(n, src)})
			}
			return ast.WalkSkipChildren, nil
		default:
			return ast.WalkContinue, nil
		}
		if u, err := url.Parse(string(dest)); err == nil && (u.Scheme != "" || u.Host != "") {
			return ast.WalkContinue, nil // not in the repository
		}
		d.links = append(d.links, markdownLink{dest: string(dest), line: lineOf(n, src)})
		return ast.WalkContinue, nil
	})
	return d, err
}

// checkLink says what is wrong with a relative link from the Markdown file
// from (relative to root), or "" when nothing is. A path starting with /
// is relative to the repository's root, as on GitHub.
func checkLink(root, from, dest string, load func(rel string) (*markdownDoc, error)) string {
	u, err := url.Parse(dest)
	if err != nil {
		return err.Error()
	}
	target := from
	switch {
	case u.Path == "":
	case strings.HasPrefix(u.Path, "/"):
		target = strings.TrimPrefix(u.Path, "/")
	default:
		target = filepath.ToSlash(filepath.Join(filepath.Dir(from), u.Path))
	}
	target = filepath.ToSlash(filepath.Clean(target))
	if target == ".." || strings.HasPrefix(target, "../") {
		return "outside the repository"
	}
	info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
	if err != nil {
		return fmt.Sprintf("no file %s", target)
	}
	if u.Fragment == "" || info.IsDir() || !strings.EqualFold(filepath.Ext(target), ".md") {
		return "" // GitHub's line anchors of other files are not checked
	}
	d, err := load(target)
	if err != nil {
		return err.Error()
	}
	if !d.anchors[u.Fragment] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", target, u.Fragment)
	}
	return ""
}

// plainText is a heading's text as GitHub shows it: inline markup, HTML
// tags, escapes and entities resolved.
func plainText(n ast.Node, src []byte) string {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if s, ok := t.(*ast.Text); ok {
					b.Write(s.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			b.Write(util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(c.Value(src)))))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// lineOf is the line of the source an inline node starts on: its first
// text's, else its block's.
func lineOf(n ast.Node, src []byte) int {
	offset := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			offset = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for p := n; offset < 0 && p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			offset = p.Lines().At(0).Start
		}
	}
	return 1 + bytes.Count(src[:max(offset, 0)], []byte("\n"))
}

// TestGitHubSlugger pins the anchors of headings to GitHub's.
func TestGitHubSlugger(t *testing.T) {
	var s reference.Slugger
	for _, tc := range []struct{ heading, want string }{
		{"Testing", "testing"},
		{"Running the manager", "running-the-manager"},
		{"GET /api/v1/node/{id}", "get-apiv1nodeid"},
		{"make test: what it runs", "make-test-what-it-runs"},
		{"edge_agent --state-dir", "edge_agent---state-dir"},
		{"Testing", "testing-1"},
		{"Testing", "testing-2"},
		{"testing-1", "testing-1-1"},
		{"Überblick (v1.2)", "überblick-v12"},
		{"", ""},
	} {
		if got := s.Slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

// TestCheckLink pins what makes a relative link broken.
func TestCheckLink(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"a.md":      "# Intro\n\n## Intro\n\n## Set `x` up &amp; run\n\nSetext heading\n---\n",
		"docs/b.md": "# B\n",
		"main.go":   "package main\n",
	} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func(rel string) (*markdownDoc, error) {
		return parseMarkdown(filepath.Join(root, filepath.FromSlash(rel)))
	}
	for _, tc := range []struct {
		from, dest string
		broken     bool
	}{
		{"a.md", "#intro", false},
		{"a.md", "#intro-1", false},
		{"a.md", "#intro-2", true},
		{"a.md", "#set-x-up--run", false},
		{"a.md", "#setext-heading", false},
		{"a.md", "#Intro", true},
		{"a.md", "docs/b.md", false},
		{"a.md", "docs/b.md#b", false},
		{"a.md", "docs/b.md#intro", true},
		{"a.md", "docs/c.md", true},
		{"a.md", "docs/", false},
		{"docs/b.md", "../a.md#intro-1", false},
		{"docs/b.md", "/a.md#intro", false},
		{"docs/b.md", "../../a.md", true},
		{"a.md", "main.go#L1", false},
		{"a.md", "a.md?plain=1#intro", false},
	} {
		if got := checkLink(root, tc.from, tc.dest, load); (got != "") != tc.broken {
			t.Errorf("link %s from %s: %q, want broken %v", tc.dest, tc.from, got, tc.broken)
		}
	}
}
