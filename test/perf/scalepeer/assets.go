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
	"time"

	"sigs.k8s.io/yaml"

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

// startDelay is how long a container takes to start on both sides: the
// simulated devices' --start-delay in test/perf/scale, and here the delay
// of kwok's pod-ready stage, which kwokctl's default stages do not have.
const startDelay = time.Second

// delayedStages writes kwok's stages from assets into dir with the
// pod-ready stage delayed by startDelay, and returns the file.
func delayedStages(assets, dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(assets, "kwok-stages.yaml"))
	if err != nil {
		return "", err
	}
	docs := strings.Split(string(raw), "\n---\n")
	found := false
	for i, doc := range docs {
		var stage map[string]any
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			return "", fmt.Errorf("kwok-stages.yaml: %w", err)
		}
		meta, _ := stage["metadata"].(map[string]any)
		spec, _ := stage["spec"].(map[string]any)
		if meta["name"] != "pod-ready" || spec == nil {
			continue
		}
		spec["delay"] = map[string]any{"durationMilliseconds": startDelay.Milliseconds()}
		b, err := yaml.Marshal(stage)
		if err != nil {
			return "", err
		}
		docs[i], found = strings.TrimSuffix(string(b), "\n"), true
	}
	if !found {
		return "", fmt.Errorf("kwok-stages.yaml in %s has no pod-ready stage", assets)
	}
	out := filepath.Join(dir, "kwok-stages.yaml")
	return out, os.WriteFile(out, []byte(strings.Join(docs, "\n---\n")), 0o600)
}
