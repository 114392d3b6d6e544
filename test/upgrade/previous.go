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

// Versions builds, into dir, the manager and the agent of the previous
// release (the newest in root's hack/releases.tsv, from its commit in git
// history) and of root's working tree, stamped with the release's version
// and with it plus "+next", as make release stamps them; each with the
// CRDs of its tree.
func Versions(root, dir string) (prev Release, from, to Version, err error) {
	if prev, err = PreviousRelease(root); err != nil {
		return prev, from, to, err
	}
	if from, err = built(root, prev.Commit, prev.Version, filepath.Join(dir, "from")); err != nil {
		return prev, from, to, err
	}
	to, err = built(root, "", prev.Version+"+next", filepath.Join(dir, "to"))
	return prev, from, to, err
}

// built builds the manager and the agent of root's tree at commit (the
// working tree when commit is empty) into dir/bin, stamped with version;
// the tree of a commit is taken from git history into dir/src.
func built(root, commit, version, dir string) (Version, error) {
	src := root
	if commit != "" {
		src = filepath.Join(dir, "src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return Version{}, err
		}
		archive := exec.Command("bash", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "archive", root, commit, src)
		if out, err := archive.CombinedOutput(); err != nil {
			return Version{}, fmt.Errorf("taking %s from git history: %w\n%s", commit, err, out)
		}
	}
	bin := filepath.Join(dir, "bin")
	// The version's variable where each tree keeps it (internal/version
	// until v0.1.0's successors grouped internal/ by process); the linker
	// skips the one a tree does not have.
	ldflags := "-X github.com/edgeplane/edgeplane/internal/shared/version.version=" + version +
		" -X github.com/edgeplane/edgeplane/internal/version.version=" + version
	build := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin+"/", "./cmd/manager", "./cmd/edge-agent")
	// The product module alone, as a release builds it: a tree taken from
	// history under this checkout must not find its go.work.
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return Version{}, fmt.Errorf("building %s: %w\n%s", version, err, out)
	}
	return Version{Name: version, Bin: bin, CRDs: filepath.Join(src, "config", "crd", "bases")}, nil
}
