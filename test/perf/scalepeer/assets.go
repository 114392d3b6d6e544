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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// peerAssets returns the directory of kube-controller-manager,
// kube-scheduler, kwok and kwok-stages.yaml: PEER_ASSETS when set, else the
// cache that hack/peer-assets.sh fills (building them on first use), as
// testenv finds envtest's binaries.
func peerAssets() (string, error) {
	dir := os.Getenv("PEER_ASSETS")
	if dir == "" {
		cmd := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "hack", "peer-assets.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("hack/peer-assets.sh: %w", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, f := range []string{"kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return "", fmt.Errorf("peer assets in %s: %w", dir, err)
		}
	}
	return dir, nil
}
