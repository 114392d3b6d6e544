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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// buildScale builds test/perf/scale once into dir, so that every pair runs the
// same binary and no run's time includes a compile.
func buildScale(ctx context.Context, dir string) (string, error) {
	scale := filepath.Join(dir, "scale")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", scale, "./test/perf/scale")
	cmd.Dir = testenv.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building test/perf/scale: %v\n%s", err, b)
	}
	return scale, nil
}

// runEdgeplane runs the scale harness, 5 services of 2 instances per node,
// with its output in logFile, and reads its last line.
func runEdgeplane(ctx context.Context, scale, bin string, nodes int, viaHub, cbor bool, timeout time.Duration, logFile string) (result, error) {
	log, err := os.Create(logFile)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = log.Close() }()
	// test/perf/scale stops itself at --timeout; the context is the backstop.
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, scale, "--nodes", strconv.Itoa(nodes), "--services", strconv.Itoa(5*nodes),
		"--bin", bin, "--timeout", timeout.String(), "--hub="+strconv.FormatBool(viaHub),
		// The peer has no readers of its own; the facade's load would be
		// work only one side does.
		"--facade-load=false",
		// kube-apiserver's CPU by stage, as the peer's is split.
		"--stages", "--cbor="+strconv.FormatBool(cbor))
	// The scale run stops its processes on SIGTERM as on its deadline.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	var line, stages string
	sc := bufio.NewScanner(io.TeeReader(pipe, log))
	for sc.Scan() {
		switch t := sc.Text(); {
		case strings.HasPrefix(t, "scale: "):
			line = t
		case strings.HasPrefix(t, "apiserver_stages: "):
			stages = t
		}
	}
	if err := cmd.Wait(); err != nil {
		return result{}, err
	}
	if line == "" {
		return result{}, errors.New("no scale line")
	}
	r, err := parseScaleLine(line)
	r.stages = stages
	return r, err
}

// parseScaleLine reads test/perf/scale's last line, as
// "scale: nodes=1000 instances=10000 success_s=297.5 writes_per_instance=4.66 ...
// apiserver_cpu_s=280.5 apiserver_cpu_ms_per_instance=28.05"; keys it does
// not know are skipped, those compared must be there.
func parseScaleLine(line string) (result, error) {
	fields := map[string]float64{}
	for kv := range strings.FieldsSeq(strings.TrimPrefix(line, "scale:")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return result{}, fmt.Errorf("scale line %q: %q is not key=value", line, kv)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return result{}, fmt.Errorf("scale line %q: %s: %w", line, k, err)
		}
		fields[k] = f
	}
	for _, k := range []string{"nodes", "instances", "success_s", "writes_per_instance", "apiserver_cpu_s", "apiserver_cpu_ms_per_instance"} {
		if _, ok := fields[k]; !ok {
			return result{}, fmt.Errorf("scale line %q lacks %s", line, k)
		}
	}
	return result{nodes: int(fields["nodes"]), instances: int(fields["instances"]), successS: fields["success_s"],
		apiserverCPUS: fields["apiserver_cpu_s"], cpuMsPerInstance: fields["apiserver_cpu_ms_per_instance"],
		writesPerInstance: fields["writes_per_instance"], line: line}, nil
}
