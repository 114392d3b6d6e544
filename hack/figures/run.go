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
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// outputGrace is how long the command's output may stay open after it
// exited, held by a process it started and left running.
const outputGrace = 10 * time.Second

// measure runs argv with its output passed through to stdout and stderr
// and read for figures into f. It returns the command's exit status, and
// an error when the command could not start or failed.
func measure(argv []string, stdin io.Reader, stdout, stderr io.Writer, f *found) (int, error) {
	var mu sync.Mutex
	out, errOut := &lineWriter{mu: &mu, f: f}, &lineWriter{mu: &mu, f: f}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = stdin
	cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, out), io.MultiWriter(stderr, errOut)
	cmd.WaitDelay = outputGrace
	// The command decides what an interrupt does: a terminal's ^C reaches
	// it already (the whole process group gets it), so here it is only
	// kept from ending this process before the command's status is known;
	// a SIGTERM sent to this process alone is passed on.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 127, err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGTERM {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	out.flush()
	errOut.flush()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, exec.ErrWaitDelay):
		// The command succeeded; what it printed until then is read.
		fmt.Fprintf(stderr, "figures: %s exited but its output stayed open %v: read until then\n", argv[0], outputGrace)
		return 0, nil
	case errors.As(err, &exit):
		status := exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = 128 + int(ws.Signal())
		}
		return status, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	default:
		return 1, err
	}
}

// maxLine bounds a line kept whole; a longer one is no figure line.
const maxLine = 1 << 20

// lineWriter hands each whole line written to it to f; mu is shared by
// the writers of standard output and standard error.
type lineWriter struct {
	mu      *sync.Mutex
	f       *found
	partial []byte
	// long is a line past maxLine, skipped to its end.
	long bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if !w.long {
			w.f.add(strings.TrimSuffix(string(w.partial[:i]), "\r"))
		}
		w.partial, w.long = w.partial[i+1:], false
	}
	if len(w.partial) > maxLine {
		w.partial, w.long = nil, true
	}
	return len(p), nil
}

// flush reads a last line that had no newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 && !w.long {
		w.f.add(strings.TrimSuffix(string(w.partial), "\r"))
		w.partial = nil
	}
}
