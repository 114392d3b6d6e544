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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Start runs a binary with its output in dir/name.log, until ctx ends or
// the caller exits.
func Start(ctx context.Context, dir, name, path string, args ...string) (*exec.Cmd, error) {
	return StartWithFiles(ctx, dir, name, nil, path, args...)
}

// StartWithFiles is Start with files the command inherits as descriptors
// 3, 4 and on (a listening socket, say).
func StartWithFiles(ctx context.Context, dir, name string, files []*os.File, path string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = log, log, files
	// Killed with its caller: a run killed itself (SIGKILL, which no
	// deferred Stop sees) leaves none of its processes behind. The signal
	// follows the OS thread that started the process; Go ends a thread
	// only when a goroutine locked to it returns, which nothing here does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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

// statFields are the fields of a /proc stat file after the command name,
// which may hold spaces and parentheses: the state is the first.
func statFields(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:])), nil
}

func statFile(pid int) string { return fmt.Sprintf("/proc/%d/stat", pid) }

// CPUTimes reads the CPU time each named process has used so far; a
// process that cannot be read is left out.
func CPUTimes(pids map[string]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range pids {
		if d, err := CPUTime(pid); err == nil {
			out[name] = d
		}
	}
	return out
}

// CPUUse lists the CPU each process used between two readings of
// CPUTimes, most first: in seconds, or in % of one core over window when
// window is given.
func CPUUse(before, after map[string]time.Duration, window time.Duration) string {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	used := func(n string) time.Duration { return after[n] - before[n] }
	sort.Slice(names, func(i, j int) bool { return used(names[i]) > used(names[j]) })
	var b strings.Builder
	for _, n := range names {
		if window > 0 {
			fmt.Fprintf(&b, "\n  %-34s %6.1f %%", n, 100*used(n).Seconds()/window.Seconds())
		} else {
			fmt.Fprintf(&b, "\n  %-34s %7.1f s", n, used(n).Seconds())
		}
	}
	return b.String()
}

// CPUTime is the user and system CPU time a process has used.
func CPUTime(pid int) (time.Duration, error) {
	f, err := statFields(statFile(pid))
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
	f, err := statFields(statFile(pid))
	if err != nil || len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// Exited says whether a process has exited: gone, or a zombie its parent
// has not waited for yet.
func Exited(pid int) bool {
	f, err := statFields(statFile(pid))
	return err != nil || len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// Pause stops a process (SIGSTOP) and returns once every thread of it is
// stopped. kill(2) returns before that: the kernel wakes one thread to
// start the group stop, and on a busy machine the others may run on for
// a while, long enough to answer a request sent right after.
func Pause(ctx context.Context, pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	return WaitFor(ctx, fmt.Sprintf("process %d to stop", pid), 2*time.Millisecond, func() (bool, error) {
		return allStopped(pid)
	})
}

// Resume continues a process that Pause stopped.
func Resume(pid int) error {
	return syscall.Kill(pid, syscall.SIGCONT)
}

// allStopped says whether every thread of a process is in the stopped state.
func allStopped(pid int) (bool, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false, err
	}
	for _, t := range tasks {
		f, err := statFields(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread exited
		}
		if err != nil {
			return false, err
		}
		if len(f) == 0 || f[0] != "T" {
			return false, nil
		}
	}
	return true, nil
}

// WaitFor polls done every interval until it says yes, fails, or ctx
// ends (apimachinery's poll), naming what it waited for when ctx ends.
func WaitFor(ctx context.Context, what string, interval time.Duration, done func() (bool, error)) error {
	var failed error
	err := wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) {
		ok, err := done()
		failed = err
		return ok, err
	})
	if err != nil && failed == nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return err
}

// MachineCPU is the CPU time all the machine's cores have spent busy
// (not idle, not waiting on I/O) since boot, from /proc/stat: what the
// processes of a run used is that, less what others used meanwhile.
func MachineCPU() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, errors.New("no cpu line in /proc/stat")
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		// idle and iowait; guest times are already in user and nice.
		if i == 3 || i == 4 || i >= 8 {
			continue
		}
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond, nil
}
