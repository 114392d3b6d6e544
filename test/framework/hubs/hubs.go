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
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/hubapi"
	"github.com/edgeplane/edgeplane/test/framework/procs"
	"github.com/edgeplane/edgeplane/test/framework/testenv"
)

// Namespace holds the hub's CA, tokens and info.
const Namespace = "edgeplane-system"

// Hubs are hub replicas behind a balancer. A replica can be SIGKILLed and
// started again (a new identity, on its old port) as a fault.
type Hubs struct {
	c                    client.Client
	bin, dir, kubeconfig string
	// Front is the balancer; URL is the hub's URL through it, as devices
	// reach it; Addrs are the replicas' own addresses.
	Front *testenv.Proxy
	URL   string
	Addrs []string
	hash  string
	mu    sync.Mutex
	cmds  []*exec.Cmd
	runs  int
}

// Start creates the hub's namespace and starts n replicas of bin (the
// manager binary), logging into dir, with kubeconfig; it returns once the
// hub published its CA.
func Start(ctx context.Context, c client.Client, bin, dir, kubeconfig string, n int) (*Hubs, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, err
	}
	h := &Hubs{c: c, bin: bin, dir: dir, kubeconfig: kubeconfig}
	for range n {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return nil, err
		}
		h.Addrs = append(h.Addrs, addr)
	}
	var err error
	if h.Front, err = testenv.StartBalancer(h.Addrs...); err != nil {
		return nil, err
	}
	h.URL = "https://" + h.Front.Addr()
	h.cmds = make([]*exec.Cmd, n)
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
		for _, addr := range h.Addrs {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return false, nil
			}
			_ = conn.Close()
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
	h.hash = hubapi.CAHash(ca)
	return h, nil
}

// start starts replica i on its port.
func (h *Hubs) start(ctx context.Context, i int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs++
	cmd, err := procs.Start(ctx, h.dir, fmt.Sprintf("hub-%d-%d", i, h.runs), h.bin,
		"--kubeconfig", h.kubeconfig, "--controllers=false", "--api-bind-address", "0",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--hub-bind-address", h.Addrs[i], "--hub-advertise-url", h.URL, "--kube-api-qps", "500", "--kube-api-burst", "1000")
	if err != nil {
		return err
	}
	h.cmds[i] = cmd
	return nil
}

// Kill SIGKILLs replica i, as a node failure would, and starts it again
// down later, as its Deployment does.
func (h *Hubs) Kill(ctx context.Context, i int, down time.Duration) error {
	h.mu.Lock()
	_ = h.cmds[i].Process.Kill()
	_ = h.cmds[i].Wait()
	h.mu.Unlock()
	time.Sleep(down)
	return h.start(ctx, i)
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
	h.Front.Close()
}

// Join adds node as kubectl edge node add does and joins it into
// dir/hub, as edge-agent join --run=false --state-dir dir does, reaching
// the hub at hub (h.URL, or a proxy in front of it).
func (h *Hubs) Join(ctx context.Context, node string, labels map[string]string, hub, dir string) error {
	n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: labels},
		Spec: edgev1alpha1.EdgeNodeSpec{Address: "127.0.0.1:7200", Type: "linux", Arch: "amd64"}}
	if err := h.c.Create(ctx, n); err != nil {
		return err
	}
	t, err := hubapi.NewToken()
	if err != nil {
		return err
	}
	if err := h.c.Create(ctx, hubapi.JoinSecret(t, Namespace, node, time.Now().Add(time.Hour))); err != nil {
		return err
	}
	_, err = hubconn.Join(ctx, hubconn.JoinOptions{Hub: hub, Token: t.String(), CAHash: h.hash, Dir: filepath.Join(dir, "hub")})
	return err
}
