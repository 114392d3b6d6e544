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

package upgrade

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Release is a release recorded in hack/releases.tsv: its version and
// the commit it was cut from.
type Release struct{ Version, Commit string }

// PreviousRelease is the newest release recorded in root's
// hack/releases.tsv: the one an upgrade starts from.
func PreviousRelease(root string) (Release, error) {
	f, err := os.Open(filepath.Join(root, "hack", "releases.tsv"))
	if err != nil {
		return Release{}, err
	}
	defer func() { _ = f.Close() }()
	var last Release
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 2 && fields[0] != "version" {
			last = Release{Version: fields[0], Commit: fields[1]}
		}
	}
	if err := s.Err(); err != nil {
		return Release{}, err
	}
	if last.Version == "" {
		return Release{}, errors.New("hack/releases.tsv records no release")
	}
	return last, nil
}

// Next is the version the working tree's binaries are stamped with in
// an upgrade run from r: r's, with build metadata that sets it apart.
func (r Release) Next() string { return r.Version + "+next" }

// Built builds the manager and the agent of root's tree at commit (the
// working tree when commit is empty) into dir, stamped with version as
// make release stamps them; the tree of a commit is taken from git
// history into dir/src.
func Built(root, commit, version, dir string) (Version, error) {
	bin, crds, err := build(root, commit, version, dir)
	return Version{Name: version, Bin: bin, CRDs: crds}, err
}

func build(root, commit, version, dir string) (bin, crds string, err error) {
	src := root
	if commit != "" {
		src = filepath.Join(dir, "src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return "", "", err
		}
		archive := exec.Command("bash", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "archive", root, commit, src)
		if out, err := archive.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("taking %s from git history: %w\n%s", commit, err, out)
		}
	}
	bin = filepath.Join(dir, "bin")
	ldflags := "-X github.com/edgeplane/edgeplane/internal/version.version=" + version
	build := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin+"/", "./cmd/manager", "./cmd/edge-agent")
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building %s: %w\n%s", version, err, out)
	}
	return bin, filepath.Join(src, "config", "crd", "bases"), nil
}
