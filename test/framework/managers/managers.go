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

// Package managers runs two manager replicas with leader election, each
// serving the facade, supervised as a Deployment would: a replica that
// exits on its own (a leader that cannot renew its lease while the API
// server is stopped exits, by design) is started again. A replica keeps
// its addresses across restarts and replacements, so that readers find
// its successor where it was. The soak and upgrade runs use them.
package managers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// Replicas are the two replicas. Facade, Metrics and Probes are each
// replica's addresses: the facade over plain HTTP, plain-HTTP metrics to
// tell the leader by and to read its goroutines, probes to tell a replica
// whose cache synced.
type Replicas struct {
	Facade, Metrics, Probes [2]string

	base             context.Context
	logf             func(format string, args ...any)
	logs, kubeconfig string
	lease            time.Duration

	mu   sync.Mutex
	bins [2]string
	cmds [2]*exec.Cmd
	// done is closed when cmds[i] has exited; ending marks a replica the
	// run is killing, replacing or stopping, not to be started again.
	done   [2]chan struct{}
	ending [2]bool
	runs   int
	// exits counts the replicas that exited on their own; stopped is set
	// once the run stops them all.
	exits   int
	stopped bool
}

// New readies two replicas of the manager binary bin, logging into logs
// and reaching the API server with kubeconfig; none runs until Start.
// Every replica lives as long as base.
func New(base context.Context, logf func(string, ...any), bin, logs, kubeconfig string, lease time.Duration) (*Replicas, error) {
	m := &Replicas{base: base, logf: logf, bins: [2]string{bin, bin}, logs: logs, kubeconfig: kubeconfig, lease: lease}
	for i := range 2 {
		for _, addr := range []*string{&m.Facade[i], &m.Metrics[i], &m.Probes[i]} {
			var err error
			if *addr, err = testenv.FreeAddr(); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Start starts replica i.
func (m *Replicas) Start(i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startLocked(i)
}

func (m *Replicas) startLocked(i int) error {
	if m.stopped {
		return nil
	}
	m.runs++
	name := fmt.Sprintf("manager-%d-%d", i, m.runs)
	args := append([]string{"--kubeconfig", m.kubeconfig, "--kube-api-qps", "200", "--kube-api-burst", "400",
		"--metrics-bind-address", m.Metrics[i], "--metrics-secure=false", "--health-probe-bind-address", m.Probes[i],
		"--api-bind-address", m.Facade[i]}, testenv.LeaderElectionFlags(m.lease)...)
	cmd, err := procs.Start(m.base, m.logs, name, m.bins[i], args...)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	m.cmds[i], m.done[i], m.ending[i] = cmd, done, false
	go func() {
		_ = cmd.Wait()
		close(done)
		time.Sleep(time.Second) // as a restarting pod would, not at once
		// Started again only if nobody killed, replaced or stopped it
		// meanwhile, and under the lock: never two on one address.
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.cmds[i] != cmd || m.ending[i] || m.stopped || m.base.Err() != nil {
			return
		}
		m.exits++
		m.logf("%s exited on its own (%s); starting it again", name, cmd.ProcessState)
		if err := m.startLocked(i); err != nil {
			m.logf("starting manager %d again: %v", i, err)
		}
	}()
	return nil
}

// Pid is replica i's process.
func (m *Replicas) Pid(i int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmds[i].Process.Pid
}

// Ready says whether replica i's informers have synced (its /readyz).
func (m *Replicas) Ready(ctx context.Context, i int) bool {
	return testenv.Ready(ctx, m.Probes[i])
}

// WaitReady waits until both replicas' caches have synced and one leads,
// for at most timeout; an error says what it last saw.
func (m *Replicas) WaitReady(ctx context.Context, timeout time.Duration) error {
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var seen string
	if err := procs.WaitFor(wait, "both managers ready and one leading", 200*time.Millisecond, func() (bool, error) {
		ready0, ready1 := m.Ready(ctx, 0), m.Ready(ctx, 1)
		_, err := m.Leader(ctx)
		seen = fmt.Sprintf("replica 0 ready %v, replica 1 ready %v, leader: %v", ready0, ready1, err)
		return ready0 && ready1 && err == nil, nil
	}); err != nil {
		return fmt.Errorf("%w; last seen: %s", err, seen)
	}
	return nil
}

// Leader finds the replica that leads.
func (m *Replicas) Leader(ctx context.Context) (int, error) {
	return testenv.Leader(ctx, m.Metrics[:])
}

// End signals replica i and waits until it has exited, without starting
// it again; SIGKILL after grace.
func (m *Replicas) End(i int, sig os.Signal, grace time.Duration) {
	m.mu.Lock()
	cmd, done := m.cmds[i], m.done[i]
	m.ending[i] = true
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Kill SIGKILLs replica i, as a node failure would, and starts its
// replacement at once, as its Deployment would.
func (m *Replicas) Kill(i int) error {
	m.End(i, os.Kill, time.Minute)
	return m.Start(i)
}

// Replace stops replica i as the kubelet stops a pod (SIGTERM, SIGKILL
// after grace) and starts bin in its place, as a rolling update of its
// Deployment does.
func (m *Replicas) Replace(i int, bin string, grace time.Duration) error {
	m.End(i, syscall.SIGTERM, grace)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bins[i] = bin
	return m.startLocked(i)
}

// Exited is how many replicas exited on their own so far.
func (m *Replicas) Exited() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exits
}

// Stop stops both replicas.
func (m *Replicas) Stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { m.End(i, os.Interrupt, 30*time.Second) })
	}
	wg.Wait()
}
