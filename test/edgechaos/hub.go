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

package edgechaos

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/hubapi"
	"github.com/edgeplane/edgeplane/test/framework/procs"
	"github.com/edgeplane/edgeplane/test/framework/testenv"
)

// hubNamespace holds the hub's CA, tokens and info.
const hubNamespace = "edgeplane-system"

// hubs are the run's two edge hub replicas, each the manager binary with
// --controllers=false, behind a balancer that spreads the devices'
// connections over them as a Service would. A replica is SIGKILLed and
// started again (a new identity, on its old port) as a fault.
type hubs struct {
	r     *run
	front *testenv.Proxy
	addrs []string
	mu    sync.Mutex
	cmds  []*exec.Cmd
	runs  int
	url   string
	hash  string
}

// startHubs starts both replicas and waits for the hub's CA.
func (r *run) startHubs(ctx context.Context) (*hubs, error) {
	if err := r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}}); err != nil {
		return nil, err
	}
	h := &hubs{r: r}
	for range 2 {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return nil, err
		}
		h.addrs = append(h.addrs, addr)
	}
	var err error
	if h.front, err = testenv.StartBalancer(h.addrs...); err != nil {
		return nil, err
	}
	h.url = "https://" + h.front.Addr()
	h.cmds = make([]*exec.Cmd, len(h.addrs))
	for i := range h.addrs {
		if err := h.start(ctx, i); err != nil {
			h.stop()
			return nil, err
		}
	}
	info := &corev1.ConfigMap{}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := procs.WaitFor(wait, "the hub's info", 200*time.Millisecond, func() (bool, error) {
		return r.c.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: hubapi.InfoConfigMap}, info) == nil, nil
	}); err != nil {
		h.stop()
		return nil, err
	}
	block, _ := pem.Decode([]byte(info.Data[hubapi.InfoCACert]))
	if block == nil {
		h.stop()
		return nil, errors.New("the hub's info holds no CA")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		h.stop()
		return nil, err
	}
	h.hash = hubapi.CAHash(ca)
	return h, nil
}

// start starts replica i on its port.
func (h *hubs) start(ctx context.Context, i int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs++
	cmd, err := procs.Start(ctx, h.r.dir, fmt.Sprintf("hub-%d-%d", i, h.runs), filepath.Join(h.r.cfg.Bin, "manager"),
		"--kubeconfig", filepath.Join(h.r.dir, "kubeconfig"), "--controllers=false", "--api-bind-address", "0",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--hub-bind-address", h.addrs[i], "--hub-advertise-url", h.url, "--kube-api-qps", "500", "--kube-api-burst", "1000")
	if err != nil {
		return err
	}
	h.cmds[i] = cmd
	return nil
}

// kill SIGKILLs replica i, as a node failure would, and starts it again a
// moment later, as its Deployment does.
func (h *hubs) kill(ctx context.Context, i int, down time.Duration) error {
	h.mu.Lock()
	_ = h.cmds[i].Process.Kill()
	_ = h.cmds[i].Wait()
	h.mu.Unlock()
	time.Sleep(down)
	return h.start(ctx, i)
}

func (h *hubs) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cmd := range h.cmds {
		if cmd != nil {
			procs.Stop(cmd)
		}
	}
	h.front.Close()
}

// join adds node as kubectl edge node add does and joins it into
// dir/hub, as edge-agent join --run=false --state-dir dir does, reaching
// the hub at hub.
func (h *hubs) join(ctx context.Context, node string, labels map[string]string, hub, dir string) error {
	n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: labels},
		Spec: edgev1alpha1.EdgeNodeSpec{Address: "127.0.0.1:7200", Type: "linux", Arch: "amd64"}}
	if err := h.r.c.Create(ctx, n); err != nil {
		return err
	}
	t, err := hubapi.NewToken()
	if err != nil {
		return err
	}
	if err := h.r.c.Create(ctx, hubapi.JoinSecret(t, hubNamespace, node, time.Now().Add(time.Hour))); err != nil {
		return err
	}
	_, err = hubconn.Join(ctx, hubconn.JoinOptions{Hub: hub, Token: t.String(), CAHash: h.hash, Dir: filepath.Join(dir, "hub")})
	return err
}

// offline counts the nodes the manager declared offline since: none may
// be, when every fault is shorter than the grace period and a killed
// replica leaves the other to move to.
func (r *run) offline(ctx context.Context, since time.Time) ([]string, error) {
	list := &eventsv1.EventList{}
	if err := r.c.List(ctx, list, client.InNamespace("default")); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == "NodeOffline" && e.Regarding.Kind == "EdgeNode" && !e.CreationTimestamp.Time.Before(since) {
			out = append(out, e.Regarding.Name+": "+strings.TrimSpace(e.Note))
		}
	}
	return out, nil
}
