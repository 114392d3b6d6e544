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

package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SkipEngineVar names the variable that, set to 1, skips the suites that
// need a real container engine. Unset, a missing engine fails them.
const SkipEngineVar = "EDGEPLANE_SKIP_ENGINE"

// EngineSkipped says whether SkipEngineVar asks to skip the engine suites.
func EngineSkipped() bool { return os.Getenv(SkipEngineVar) == "1" }

// Engine is a private container engine serving the Docker Engine API,
// started by hack/engine.sh with its state in Dir.
type Engine struct {
	Dir string
	// Host is the engine's API address, for DOCKER_HOST.
	Host string
}

// StartEngine starts a private engine of a kind, podman or docker
// (installing it from Debian packages when absent). Its images are
// edgeplane.local/box:1 and :2.
func StartEngine(kind string) (*Engine, error) {
	// A short name: under make test's TMPDIR (hack/test.sh), a longer
	// path made Podman 4.3 miss restarts by policy on a busy machine.
	dir, err := os.MkdirTemp("", "engine.")
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "hack", "engine.sh"), "start", dir, kind)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("hack/engine.sh start: %w\n%s", err, stderr.String())
	}
	host, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "DOCKER_HOST=")
	if !ok {
		return nil, fmt.Errorf("hack/engine.sh start printed %q, want DOCKER_HOST=...", out)
	}
	return &Engine{Dir: dir, Host: host}, nil
}

// Stop removes the engine's containers, stops it and removes its state.
func (e *Engine) Stop() error { return e.script("stop") }

// Down stops the engine's API service, as a crash or an upgrade of the
// engine does; its containers and images stay.
func (e *Engine) Down() error { return e.script("down") }

// Up starts the engine's API service again after Down.
func (e *Engine) Up() error { return e.script("up") }

func (e *Engine) script(cmd string) error {
	out, err := exec.Command("bash", filepath.Join(RepoRoot(), "hack", "engine.sh"), cmd, e.Dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("hack/engine.sh %s: %w: %s", cmd, err, out)
	}
	return nil
}
