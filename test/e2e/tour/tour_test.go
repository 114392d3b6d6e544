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

// Package tour runs the README's tour against make dev, as a reader
// would in a second terminal.
package tour

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// runnable opens a fenced block the tour test runs: "```sh runnable".
const runnable = "```sh runnable"

// TestReadmeTour starts make dev (hack/dev.sh) on free ports and runs each
// of README.md's runnable blocks against it with bash -euo pipefail: a
// command of the tour that fails, or a block that outlives its deadline,
// fails the test with its output.
func TestReadmeTour(t *testing.T) {
	root := testenv.RepoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := RunnableBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatalf("README.md has no block opened with %q", runnable)
	}
	api, agg, hub := freePort(t), freePort(t), freePort(t)
	kubeconfig := startDev(t, root, api, agg, hub)
	for i, b := range blocks {
		script := ForDev(b, kubeconfig, api)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("README.md's runnable block %d: %v\n--- script\n%s\n--- output\n%s", i+1, err, script, out)
		}
	}
}

// RunnableBlocks are the contents of the Markdown's runnable blocks.
func RunnableBlocks(md string) []string {
	var out []string
	var cur *strings.Builder
	for line := range strings.Lines(md) {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == runnable:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return out
}

var (
	devKubeconfig = regexp.MustCompile(`/tmp/edgeplane-dev\.[A-Za-z0-9]+/kubeconfig`)
	devFacade     = regexp.MustCompile(`127\.0\.0\.1:8090\b`)
)

// ForDev is a block as it runs against this make dev: its kubeconfig in
// place of the one the README shows, its facade's port in place of 8090.
func ForDev(block, kubeconfig string, apiPort int) string {
	block = devKubeconfig.ReplaceAllLiteralString(block, kubeconfig)
	return devFacade.ReplaceAllLiteralString(block, fmt.Sprintf("127.0.0.1:%d", apiPort))
}

// startDev runs hack/dev.sh until the test ends and returns the
// kubeconfig it prints once everything runs. Ctrl-C (SIGINT) stops it,
// as a reader stops it.
func startDev(t *testing.T, root string, api, agg, hub int) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "dev.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), fmt.Sprintf("DEV_API_PORT=%d", api), fmt.Sprintf("DEV_AGGREGATED_PORT=%d", agg), fmt.Sprintf("DEV_HUB_PORT=%d", hub))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log := &syncBuffer{}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = pw.Close(); close(exited) }()
	ready := make(chan string, 1)
	go func() {
		kubeconfig := ""
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			log.WriteString(line + "\n")
			if k, ok := strings.CutPrefix(strings.TrimSpace(line), "kubeconfig:"); ok {
				kubeconfig = strings.TrimSpace(k)
			}
			if strings.Contains(line, "Ctrl-C stops everything.") {
				ready <- kubeconfig
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Errorf("make dev did not stop within a minute of Ctrl-C")
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	select {
	case kubeconfig := <-ready:
		if kubeconfig == "" {
			t.Fatalf("make dev printed no kubeconfig:\n%s", log)
		}
		return kubeconfig
	case <-exited:
		t.Fatalf("make dev exited before it was ready:\n%s", log)
	case <-time.After(10 * time.Minute): // a cold machine builds kube-apiserver first
		t.Fatalf("make dev was not ready within 10 minutes:\n%s", log)
	}
	return ""
}

// syncBuffer is a buffer that make dev's output goes into from two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(addr)
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
