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
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// kernelBalancer spreads new connections to one loopback address over the
// hub replicas with DNAT rules in the nat table's OUTPUT chain, as
// kube-proxy's iptables mode does for a Service: the kernel rewrites each
// new connection's destination and nothing copies the bytes, so the run
// does not spend the machine's CPU on a balancer a cluster does not have.
// It needs root (CAP_NET_ADMIN) and iptables.
type kernelBalancer struct {
	mu    sync.Mutex
	chain string
	vip   string
	port  string
}

// kernelBalancing says why the kernel cannot balance here, or nil.
func kernelBalancing(ctx context.Context) error {
	_, err := iptables(ctx, "", "-t", "nat", "-S", "OUTPUT")
	return err
}

// startKernelBalancer balances a free loopback port over targets.
func startKernelBalancer(ctx context.Context, targets []string) (*kernelBalancer, error) {
	vip, err := testenv.FreeAddr()
	if err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(vip)
	if err != nil {
		return nil, err
	}
	k := &kernelBalancer{chain: "EDGEPLANE-SCALE-" + port, vip: vip, port: port}
	if _, err := iptables(ctx, "", "-t", "nat", "-N", k.chain); err != nil {
		return nil, err
	}
	if err := k.SetTargets(ctx, targets); err != nil {
		k.Close()
		return nil, err
	}
	if _, err := iptables(ctx, "", append([]string{"-t", "nat", "-A", "OUTPUT"}, k.jump()...)...); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// jump is the OUTPUT rule that sends the balancer's address to its chain.
func (k *kernelBalancer) jump() []string {
	return []string{"-p", "tcp", "-d", "127.0.0.1", "--dport", k.port, "-j", k.chain}
}

// SetTargets replaces the targets in one transaction, as kube-proxy does
// when a Service's endpoints change: connections open stay where they are.
func (k *kernelBalancer) SetTargets(ctx context.Context, targets []string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, err := iptables(ctx, dnatRules(k.chain, targets), "--noflush")
	return err
}

// dnatRules are iptables-restore's input for a chain that sends each new
// connection to one of targets with equal chance: the first with
// probability 1/n, the next with 1/(n-1) of what is left, and so on.
func dnatRules(chain string, targets []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*nat\n-F %s\n", chain)
	for i, t := range targets {
		if left := len(targets) - i; left > 1 {
			fmt.Fprintf(&b, "-A %s -p tcp -m statistic --mode random --probability %.5f -j DNAT --to-destination %s\n", chain, 1/float64(left), t)
			continue
		}
		fmt.Fprintf(&b, "-A %s -p tcp -j DNAT --to-destination %s\n", chain, t)
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// Close removes the rules.
func (k *kernelBalancer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = iptables(ctx, "", append([]string{"-t", "nat", "-D", "OUTPUT"}, k.jump()...)...)
	_, _ = iptables(ctx, "", "-t", "nat", "-F", k.chain)
	_, _ = iptables(ctx, "", "-t", "nat", "-X", k.chain)
}

// iptables runs iptables, or iptables-restore with input when input is
// set, within 10 s.
func iptables(ctx context.Context, input string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	name := "iptables"
	if input != "" {
		name = "iptables-restore"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(input)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}
