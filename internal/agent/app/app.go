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

// Package app composes the edge agent, as internal/manager composes the
// manager: cmd/edge-agent parses and checks its flags into a Config, and
// Run picks the runtime, reaches the cluster (straight, or through the
// edge hub with the identity the device joined with) and runs the nodes.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/docker"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
)

// Config is the agent's checked flags.
type Config struct {
	// Agent holds the nodes' options; Nodes and NewRuntime are set here.
	Agent agent.Options
	// Runtime is docker (RuntimeEndpoint, ImageRegistry) or sim (Sim,
	// Silences).
	Runtime                        string
	RuntimeEndpoint, ImageRegistry string
	Sim                            sim.Options
	Silences                       []sim.Silence

	// HubDir holds the identity the device joined the hub with
	// (<state-dir>/hub; empty without a state dir).
	HubDir string
	// Join, when set, joins the hub first (and runs only with JoinRun).
	Join    *hubconn.JoinOptions
	JoinRun bool
	// Kubeconfig says --kubeconfig was given: the cluster is reached with
	// it even when the device joined the hub. LeaseNamespaceSet says
	// --lease-namespace was given.
	Kubeconfig, LeaseNamespaceSet bool

	// One node (NodeName, reporting Advertise), or Nodes nodes named
	// <NodePrefix>-<type>-<NN> of Types and Arches in turn; all with Labels.
	NodeName, Advertise, NodePrefix string
	Nodes                           int
	Types, Arches                   []string
	Labels                          map[string]string
	// HubIdentities is a directory of simulated devices' hub identities.
	HubIdentities string

	QPS       float64
	Burst     int
	PprofAddr string
}

// Run runs the agent until ctx ends; with Join and not JoinRun, it joins
// the hub and returns.
func Run(ctx context.Context, c Config) error {
	o, hubDir := c.Agent, c.HubDir
	// Through the hub when joining, or when the device joined and no
	// --kubeconfig is given: the identity it joined with beats a KUBECONFIG
	// that happens to be set.
	viaHub := c.Join != nil || (!c.Kubeconfig && hubDir != "" && hubconn.Joined(hubDir))
	if viaHub && c.Nodes > 1 {
		return fmt.Errorf("--nodes %d: a hub identity is one node's (%s); play many nodes with --kubeconfig, straight to the API server", c.Nodes, hubDir)
	}
	switch c.Runtime {
	case "sim":
		o.NewRuntime = sim.Runtimes(c.Sim)
		o.Silent = sim.Silent(c.Silences, time.Now())
	case "docker":
		if c.Join != nil && !c.JoinRun {
			break // nothing to run
		}
		if c.NodeName == "" && !viaHub {
			host, err := os.Hostname()
			if err != nil {
				return fmt.Errorf("--node-name: %w", err)
			}
			c.NodeName = host
		}
		rt, err := docker.New(docker.Options{Endpoint: c.RuntimeEndpoint, Registry: c.ImageRegistry})
		if err != nil {
			return err
		}
		defer func() { _ = rt.Close() }()
		o.NewRuntime = func(agent.Node, int) (agent.Runtime, error) { return rt, nil }
	default:
		return fmt.Errorf("--runtime %q: want docker or sim", c.Runtime)
	}
	if c.Advertise != "" && c.NodeName == "" && !viaHub {
		return errors.New("--advertise-address is the address of one node (--node-name); the nodes of --nodes each report their own")
	}

	cfg, node, err := reach(ctx, c, &o, hubDir, viaHub)
	if err != nil || (c.Join != nil && !c.JoinRun) {
		return err
	}
	if cfg != nil {
		cfg.QPS, cfg.Burst = float32(c.QPS), c.Burst
	}
	o.Nodes = Nodes(node, c.Advertise, c.NodePrefix, c.Nodes, c.Types, c.Arches, c.Labels)
	if c.HubIdentities != "" {
		if o.NodeConfig, err = simulatedDevices(ctx, c.HubIdentities, o); err != nil {
			return err
		}
	}
	if c.PprofAddr != "" {
		if err := servePprof(ctx, c.PprofAddr); err != nil {
			return fmt.Errorf("--pprof-bind-address: %w", err)
		}
	}
	return agent.Run(ctx, cfg, o)
}

// reach gives the connection to the cluster and the node's name: through
// the hub (joining first with c.Join) as the node the device joined as,
// or with the kubeconfig; none when simulated devices each have their own.
func reach(ctx context.Context, c Config, o *agent.Options, hubDir string, viaHub bool) (*rest.Config, string, error) {
	var (
		id  *hubconn.Identity
		err error
	)
	switch {
	case c.Join != nil:
		// The node is the one given, else the one the token joins.
		j := *c.Join
		j.Node, j.Dir = c.NodeName, hubDir
		if id, err = hubconn.Join(ctx, j); err != nil {
			return nil, "", err
		}
		fmt.Printf("joined the hub as node %s\n", id.Node)
		if !c.JoinRun {
			return nil, id.Node, nil
		}
	case viaHub:
		if id, err = hubconn.Load(hubDir); err != nil {
			return nil, "", err
		}
		if c.NodeName != "" && c.NodeName != id.Node {
			return nil, "", fmt.Errorf("--node-name %s: this device joined the hub as node %s (%s), and its certificate is that node's alone", c.NodeName, id.Node, hubDir)
		}
	}
	if id == nil {
		if c.HubIdentities != "" {
			return nil, c.NodeName, nil
		}
		cfg, err := config.GetConfig()
		if err != nil {
			return nil, "", fmt.Errorf("%w: this device has neither joined the edge hub (edge-agent join --hub ... --token ... --ca-cert-hash ..., as kubectl edge node add prints it) nor a --kubeconfig", err)
		}
		return cfg, c.NodeName, nil
	}
	if id.LeaseNamespace != "" {
		if c.LeaseNamespaceSet && o.LeaseNamespace != id.LeaseNamespace {
			return nil, "", fmt.Errorf("--lease-namespace %s: the hub keeps node %s's Lease in %s", o.LeaseNamespace, id.Node, id.LeaseNamespace)
		}
		o.LeaseNamespace = id.LeaseNamespace
	}
	cfg, err := id.RESTConfig()
	if err != nil {
		return nil, "", err
	}
	o.Log.Info("Reaching the cluster through the edge hub", "hub", id.Server, "node", id.Node)
	go id.KeepRenewed(ctx, clock.RealClock{}, o.Log.WithName("hub-credentials"))
	return cfg, id.Node, nil
}

// simulatedDevices loads the hub identity of every simulated node from
// dir/<node>/hub, keeps each renewed, and gives each node its own
// connection through the hub.
func simulatedDevices(ctx context.Context, dir string, o agent.Options) (func(agent.Node) (*rest.Config, error), error) {
	ids := make(map[string]*hubconn.Identity, len(o.Nodes))
	for _, n := range o.Nodes {
		id, err := hubconn.Load(filepath.Join(dir, n.Name, "hub"))
		if err != nil {
			return nil, fmt.Errorf("--hub-identities: node %s: %w", n.Name, err)
		}
		if id.Node != n.Name {
			return nil, fmt.Errorf("--hub-identities: %s holds node %s's identity, not %s's", filepath.Join(dir, n.Name), id.Node, n.Name)
		}
		ids[n.Name] = id
		go id.KeepRenewed(ctx, clock.RealClock{}, o.Log.WithName("hub-credentials").WithValues("node", n.Name))
	}
	return func(n agent.Node) (*rest.Config, error) { return ids[n.Name].RESTConfig() }, nil
}

// Nodes names the nodes to play: one named node, which reports address
// (empty: the one its connection gives it), or count nodes
// <prefix>-<type>-<NN> with types and arches given in turn, each at an
// address of its own.
func Nodes(name, address, prefix string, count int, types, arches []string, labels map[string]string) []agent.Node {
	if name != "" {
		return []agent.Node{{Name: name, Type: types[0], Arch: arches[0], Address: address, Labels: labels}}
	}
	out := make([]agent.Node, 0, count)
	for i := range count {
		t, a := types[i%len(types)], arches[i%len(arches)]
		out = append(out, agent.Node{
			Name: fmt.Sprintf("%s-%s-%02d", prefix, t, i+1), Type: t, Arch: a,
			Address: fmt.Sprintf("10.77.%d.%d:7200", i/250, i%250+1), Labels: labels,
		})
	}
	return out
}

// servePprof serves Go's profiles on addr until ctx ends.
func servePprof(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}
