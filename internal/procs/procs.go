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

// Package procs runs the real binaries of the scale and benchmark runs
// and reads their memory and CPU time from /proc.
package procs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Start runs a binary with its output in dir/name.log.
func Start(ctx context.Context, dir, name, path string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return cmd, nil
}

// stopGrace is how long Stop lets the commands exit after the interrupt
// before it kills them. A process started with SIGINT ignored, as a shell
// starts background jobs, never sees the interrupt and must not hang its
// caller.
var stopGrace = 30 * time.Second

// Stop interrupts the commands and waits for them, killing those still
// running after stopGrace.
func Stop(cmds ...*exec.Cmd) {
	for _, c := range cmds {
		_ = c.Process.Signal(os.Interrupt)
	}
	deadline := time.Now().Add(stopGrace)
	for _, c := range cmds {
		kill := time.AfterFunc(time.Until(deadline), func() { _ = c.Process.Kill() })
		_ = c.Wait()
		kill.Stop()
	}
}

// RSS is a process's resident memory in bytes.
func RSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// statFields are the fields of /proc/<pid>/stat after the command name,
// which may hold spaces and parentheses: the state is the first.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:])), nil
}

// CPUTime is the user and system CPU time a process has used.
func CPUTime(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	// USER_HZ is 100 on every Linux the agent runs on.
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// Parent is a process's parent pid; 0 if it cannot be read.
func Parent(pid int) int {
	f, err := statFields(pid)
	if err != nil || len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// WaitFor polls done every interval until it says yes, fails, or ctx ends.
func WaitFor(ctx context.Context, what string, interval time.Duration, done func() (bool, error)) error {
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(interval):
		}
	}
}
