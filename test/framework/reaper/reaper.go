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

// Package reaper runs a test binary so that nothing it starts outlives
// it: the binary in a process group of its own, this process the
// subreaper of everything the binary starts (an engine that detaches with
// setsid, a shim that double-forks), and whatever is still alive once the
// binary exited killed and named. make test runs every test package
// through it (go test -exec, hack/testexec).
package reaper

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// settle is how long processes that are already exiting (a child killed
// by its parent-death signal, say) get to be gone before they count as
// left behind.
const settle = 10 * time.Second

// repeat is how soon after an interrupt another counts as a new one.
const repeat = 5 * time.Second

// Run runs argv as a test binary and returns the exit code go test should
// see: the binary's own, or 1 when it passed but left processes running.
// An interrupt or termination of this process is passed to the binary,
// which is out of the terminal's process group: a Ginkgo suite then
// interrupts its spec and runs its cleanup before it exits.
func Run(argv []string, stderr io.Writer) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "testexec: becoming the subreaper: %v\n", err)
		return 1
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Own group: a Ctrl-C reaches the binary once, from here, not at
	// the same moment as every server it started. Pdeathsig: should this
	// process be killed outright, the binary goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testexec: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	var last time.Time
wait:
	for {
		select {
		case s := <-sigs:
			// A Ctrl-C can arrive twice, from the terminal and from make
			// test's script; a second interrupt would cut the suite's
			// cleanup short. One a few seconds later is a person's.
			if time.Since(last) > repeat {
				_ = cmd.Process.Signal(s)
				last = time.Now()
			}
		case err = <-done:
			break wait
		}
	}

	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
	}
	left := Reap(os.Getpid(), settle)
	for _, p := range left {
		fmt.Fprintf(stderr, "testexec: %s left running: pid %d %s (killed)\n", filepath.Base(argv[0]), p.PID, p.Cmdline)
	}
	if len(left) > 0 && code == 0 {
		fmt.Fprintf(stderr, "testexec: FAIL: the test passed but left %d processes running\n", len(left))
		return 1
	}
	return code
}

// Proc is a process found alive after its test ended.
type Proc struct {
	PID     int
	Cmdline string
}

// Reap waits up to grace for the descendants of pid to be gone, reaping
// those that become its children, then kills those still alive and
// returns them.
func Reap(pid int, grace time.Duration) []Proc {
	var alive []Proc
	for deadline := time.Now().Add(grace); ; time.Sleep(100 * time.Millisecond) {
		reapZombies()
		alive = Descendants(pid)
		if len(alive) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(alive) == 0 {
		return nil
	}
	// Killed until none is left: a killed parent's children come to pid.
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		now := Descendants(pid)
		if len(now) == 0 {
			break
		}
		for _, p := range now {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		reapZombies()
	}
	reapZombies()
	return alive
}

// reapZombies collects the exit status of every exited child.
func reapZombies() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// Descendants lists the live (not zombie) processes below pid, read from
// /proc.
func Descendants(pid int) []Proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := stat(p)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], p)
		zombie[p] = state == "Z" || state == "X"
	}
	var out []Proc
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			queue = append(queue, c)
			if !zombie[c] {
				out = append(out, Proc{PID: c, Cmdline: cmdline(c)})
			}
		}
	}
	return out
}

// stat reads a process's parent and state from /proc/PID/stat; the
// command name before them may hold spaces and parentheses.
func stat(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], err == nil
}

// cmdline is a process's command line, cut to a readable length.
func cmdline(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	s := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
