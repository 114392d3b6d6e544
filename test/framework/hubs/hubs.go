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

// Package hubs runs edge hub replicas for the harnesses: the manager
// binary with --controllers=false and --hub-bind-address, behind a
// balancer that spreads the devices' connections over them as a Service
// would, and joins simulated or real devices to them.
package hubs

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// Namespace holds the hub's CA, tokens and info.
const Namespace = "edgeplane-system"

// Options say which replicas to run.
type Options struct {
	// Bin is the manager binary; the replicas log into Dir and reach the
	// API server with Kubeconfig.
	Bin, Dir, Kubeconfig string
	Replicas             int
	// Args, when set, are more flags of replica i (its metrics address,
	// say).
	Args func(i int) []string
	// Front, when set, starts the balancer in front of the replicas'
	// addresses elsewhere (in processes of its own) and says where it
	// listens; Hubs.Front is then nil. Unset, the balancer is in this
	// process.
	Front func(targets []string) (addr string, stop func(), err error)
}

// Hubs are hub replicas behind a balancer. A replica can be SIGKILLed and
// started again (a new identity, on its old port) as a fault.
type Hubs struct {
	c client.Client
	o Options
	// Front is the balancer, when in this process; URL is the hub's URL
	// through it, as devices reach it; Addrs are the replicas' own
	// addresses.
	Front     *testenv.Proxy
	URL       string
	Addrs     []string
	CAHash    string
	stopFront func()
	mu        sync.Mutex
	cmds      []*exec.Cmd
	bins      []string
	logs      []string
	runs      int
}

// Start creates the hub's namespace and starts the replicas; it returns
// once every replica listens and the hub published its CA.
func Start(ctx context.Context, c client.Client, o Options) (*Hubs, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, err
	}
	h := &Hubs{c: c, o: o}
	for range o.Replicas {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return nil, err
		}
		h.Addrs = append(h.Addrs, addr)
	}
	front := o.Front
	if front == nil {
		front = func(targets []string) (string, func(), error) {
			var err error
			if h.Front, err = testenv.StartBalancer(targets...); err != nil {
				return "", nil, err
			}
			return h.Front.Addr(), h.Front.Close, nil
		}
	}
	addr, stop, err := front(h.Addrs)
	if err != nil {
		return nil, err
	}
	h.URL, h.stopFront = "https://"+addr, stop
	h.cmds, h.logs, h.bins = make([]*exec.Cmd, o.Replicas), make([]string, o.Replicas), make([]string, o.Replicas)
	for i := range h.bins {
		h.bins[i] = o.Bin
	}
	for i := range h.Addrs {
		if err := h.start(ctx, i); err != nil {
			h.Stop()
			return nil, err
		}
	}
	info := &corev1.ConfigMap{}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// Every replica listens (it publishes its info just before), so that
	// the first join does not meet one still starting.
	if err := procs.WaitFor(wait, "the hub replicas listening and the hub's info", 200*time.Millisecond, func() (bool, error) {
		for i := range h.Addrs {
			if ok, err := h.listening(i); !ok || err != nil {
				return false, err
			}
		}
		return c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: hubapi.InfoConfigMap}, info) == nil, nil
	}); err != nil {
		h.Stop()
		return nil, err
	}
	block, _ := pem.Decode([]byte(info.Data[hubapi.InfoCACert]))
	if block == nil {
		h.Stop()
		return nil, errors.New("the hub's info holds no CA")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		h.Stop()
		return nil, err
	}
	h.CAHash = hubapi.CAHash(ca)
	return h, nil
}

// start starts replica i on its port.
func (h *Hubs) start(ctx context.Context, i int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs++
	name := fmt.Sprintf("hub-%d-%d", i, h.runs)
	args := []string{"--kubeconfig", h.o.Kubeconfig, "--controllers=false", "--api-bind-address", "0",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		// A replica's share of the fleet moving to the other is that many
		// transitions to write within the grace period.
		"--hub-bind-address", h.Addrs[i], "--hub-advertise-url", h.URL, "--kube-api-qps", "500", "--kube-api-burst", "1000"}
	if h.o.Args != nil {
		args = append(args, h.o.Args(i)...)
	}
	cmd, err := procs.Start(ctx, h.o.Dir, name, h.bins[i], args...)
	if err != nil {
		return err
	}
	h.cmds[i], h.logs[i] = cmd, filepath.Join(h.o.Dir, name+".log")
	return nil
}

func (h *Hubs) cmd(i int) *exec.Cmd {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cmds[i]
}

// Pid is replica i's process.
func (h *Hubs) Pid(i int) int { return h.cmd(i).Process.Pid }

var replicaInLog = regexp.MustCompile(`Edge hub serving.*"replica"\s*:\s*"([^"]+)"`)

// Identity is replica i's identity, its Lease's name, from its log line
// "Edge hub serving"; empty until it logged it.
func (h *Hubs) Identity(i int) string {
	h.mu.Lock()
	log := h.logs[i]
	h.mu.Unlock()
	b, err := os.ReadFile(log)
	if err != nil {
		return ""
	}
	if m := replicaInLog.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// Kill SIGKILLs replica i, as a node failure would.
func (h *Hubs) Kill(i int) error {
	cmd := h.cmd(i)
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	_ = cmd.Wait()
	return nil
}

// Restart SIGKILLs replica i and starts it again down later, as its
// Deployment does.
func (h *Hubs) Restart(ctx context.Context, i int, down time.Duration) error {
	if err := h.Kill(i); err != nil {
		return err
	}
	time.Sleep(down)
	return h.start(ctx, i)
}

// Replace stops replica i as the kubelet stops a pod (SIGTERM, SIGKILL
// after a grace period) and starts bin in its place on its port, as a
// rolling update of its Deployment does; it returns once the new replica
// listens.
func (h *Hubs) Replace(ctx context.Context, i int, bin string) error {
	procs.Stop(h.cmd(i))
	h.mu.Lock()
	h.bins[i] = bin
	h.mu.Unlock()
	if err := h.start(ctx, i); err != nil {
		return err
	}
	return procs.WaitFor(ctx, fmt.Sprintf("hub replica %d listening on %s", i, h.Addrs[i]), 100*time.Millisecond, func() (bool, error) {
		return h.listening(i)
	})
}

// listening says whether replica i accepts connections; an error when it
// exited.
func (h *Hubs) listening(i int) (bool, error) {
	if cmd := h.cmd(i); procs.Exited(cmd.Process.Pid) {
		return false, fmt.Errorf("hub replica %d exited (see %s)", i, h.logs[i])
	}
	conn, err := net.DialTimeout("tcp", h.Addrs[i], time.Second)
	if err != nil {
		return false, nil
	}
	_ = conn.Close()
	return true, nil
}

// Stop stops every replica and the balancer.
func (h *Hubs) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cmd := range h.cmds {
		if cmd != nil {
			procs.Stop(cmd)
		}
	}
	h.stopFront()
}

// Join adds node as kubectl edge node add does (the EdgeNode, and a join
// token owned by it) and joins a device as it into dir/hub, as edge-agent
// join --run=false --state-dir dir does, reaching the hub at hub (h.URL,
// or a proxy in front of it).
func (h *Hubs) Join(ctx context.Context, node *edgev1alpha1.EdgeNode, hub, dir string) error {
	if err := h.c.Create(ctx, node); err != nil {
		return fmt.Errorf("adding node %s: %w", node.Name, err)
	}
	t, err := hubapi.NewToken()
	if err != nil {
		return err
	}
	s := hubapi.JoinSecret(t, Namespace, node.Name, time.Now().Add(time.Hour))
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: edgev1alpha1.GroupVersion.String(), Kind: "EdgeNode", Name: node.Name, UID: node.UID}}
	if err := h.c.Create(ctx, s); err != nil {
		return fmt.Errorf("the join token of %s: %w", node.Name, err)
	}
	_, err = hubconn.Join(ctx, hubconn.JoinOptions{Hub: hub, Token: t.String(), CAHash: h.CAHash, Node: node.Name, Dir: filepath.Join(dir, "hub")})
	if err != nil {
		return fmt.Errorf("joining %s: %w", node.Name, err)
	}
	return nil
}

// Node is an EdgeNode as kubectl edge node add makes it for a simulated
// device: linux/amd64 unless the caller says otherwise.
func Node(name string, labels map[string]string) *edgev1alpha1.EdgeNode {
	return &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: edgev1alpha1.EdgeNodeSpec{Address: "127.0.0.1:7200", Type: "linux", Arch: "amd64"}}
}
