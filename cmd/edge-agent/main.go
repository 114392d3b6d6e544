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

// Command edge-agent is the reference edge agent. By default
// (--runtime=docker) it runs one node's containers on a Docker Engine API
// (Docker or Podman); with --runtime=sim it simulates one node, or many
// (--nodes) as a load generator, for make dev, tests and scale runs.
//
// It reaches the cluster with a kubeconfig, or through the edge hub once
// the device joined it: edge-agent join --hub https://HOST:PORT --token
// ID.SECRET --ca-cert-hash sha256:... saves the node's identity in
// <state-dir>/hub, and the agent started without a kubeconfig uses it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/cmd/edge-agent/flags"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/docker"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/shared/version"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "edge-agent:", err)
		os.Exit(1)
	}
}

// checkJoin validates the flags before anything is sent: a token joins once.
func checkJoin(j flags.Join, fs *flag.FlagSet, stateDir string) error {
	if j.Hub == "" || j.Token == "" || j.CAHash == "" {
		return errors.New("edge-agent join needs --hub, --token and --ca-cert-hash, as kubectl edge node add prints them")
	}
	if _, err := hubconn.CheckHubURL(j.Hub); err != nil {
		return err
	}
	if _, err := hubapi.ParseToken(j.Token); err != nil {
		return fmt.Errorf("--token: %w", err)
	}
	if err := hubapi.CheckCAHash(j.CAHash); err != nil {
		return err
	}
	if flagSet(fs, "kubeconfig") {
		return errors.New("--kubeconfig: edge-agent join runs the agent through the hub, without a kubeconfig")
	}
	if flagSet(fs, "lease-namespace") {
		return errors.New("--lease-namespace: the hub names the namespace of the node's Lease")
	}
	if stateDir == "" {
		return errors.New("--state-dir: edge-agent join keeps the node's identity in <state-dir>/hub: give it a directory")
	}
	return nil
}

func run(ctx context.Context, args []string) error {
	join := len(args) > 0 && args[0] == "join"
	cmd := "edge-agent"
	if join {
		args, cmd = args[1:], "edge-agent join"
	}
	fs, v := flags.NewFlagSet(cmd, join)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o, so := v.Agent, v.Sim
	if join && fs.NArg() > 0 {
		return fmt.Errorf("edge-agent join: unexpected argument %q", fs.Arg(0))
	}
	if !join && fs.Arg(0) == "join" {
		return errors.New("join is a subcommand: it comes before the flags (edge-agent join --hub ...)")
	}
	if v.ShowVersion {
		fmt.Println(version.String("edge-agent"))
		return nil
	}
	if v.PrintRBAC != "" {
		fmt.Print(agent.RBAC(v.PrintRBAC, o.LeaseNamespace))
		return nil
	}
	if join {
		if err := checkJoin(v.Join, fs, v.StateDir); err != nil {
			return err
		}
	}
	advertise, err := advertiseAddress(fs, v)
	if err != nil {
		return err
	}
	if o.MaxInstances < 1 || o.MaxInstances > 2000 {
		return fmt.Errorf("--max-instances %d: must be 1 to 2000 (status.containers holds 2,048 entries, some for containers edgeplane does not manage)", o.MaxInstances)
	}
	// Through the hub when joining, or when the device joined and no
	// --kubeconfig is given: the identity it joined with beats a KUBECONFIG
	// that happens to be set.
	hubDir := ""
	if v.StateDir != "" {
		hubDir = filepath.Join(v.StateDir, "hub")
	}
	viaHub := join || (!flagSet(fs, "kubeconfig") && hubDir != "" && hubconn.Joined(hubDir))
	if viaHub && v.Nodes > 1 {
		return fmt.Errorf("--nodes %d: a hub identity is one node's (%s); play many nodes with --kubeconfig, straight to the API server", v.Nodes, hubDir)
	}
	o.StateDir = v.StateDir
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&v.Zap)))
	o.Log = ctrl.Log.WithName("edge-agent")
	var simSilences []sim.Silence
	switch v.Runtime {
	case "sim":
		if !flagSet(fs, "state-dir") {
			o.StateDir = "" // simulated containers do not outlive the process
		}
		var err error
		for _, re := range []struct {
			flag, v string
			to      **regexp.Regexp
		}{{"fail-images", v.FailImages, &so.FailImages}, {"crash-images", v.CrashImages, &so.CrashImages}, {"slow-pulls", v.SlowPulls, &so.SlowPulls}, {"stall-pulls", v.StallPulls, &so.StallPulls}} {
			if *re.to, err = optionalRegexp(re.v); err != nil {
				return fmt.Errorf("--%s: %w", re.flag, err)
			}
		}
		for _, s := range v.Silences {
			parts := strings.Split(s, ":")
			if len(parts) != 3 {
				return fmt.Errorf("--silence %q: want node:after:for", s)
			}
			after, err1 := time.ParseDuration(parts[1])
			dur, err2 := time.ParseDuration(parts[2])
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("--silence %q: %w", s, err)
			}
			simSilences = append(simSilences, sim.Silence{Node: parts[0], After: after, For: dur})
		}
		o.NewRuntime = sim.Runtimes(so)
		o.Silent = sim.Silent(simSilences, time.Now())
	case "docker":
		for _, f := range []string{"fail-images", "crash-images", "slow-pulls", "stall-pulls", "silence", "start-delay", "pull-time", "system-containers", "nodes", "hub-identities"} {
			if flagSet(fs, f) {
				return fmt.Errorf("--%s is a setting of the simulator (--runtime=sim), not of --runtime=docker", f)
			}
		}
		if join && !v.Join.Run {
			break // nothing to run
		}
		if v.NodeName == "" && !viaHub {
			host, err := os.Hostname()
			if err != nil {
				return fmt.Errorf("--node-name: %w", err)
			}
			v.NodeName = host
		}
		rt, err := docker.New(docker.Options{Endpoint: v.RuntimeEndpoint, Registry: v.ImageRegistry})
		if err != nil {
			return err
		}
		defer func() { _ = rt.Close() }()
		o.NewRuntime = func(agent.Node, int) (agent.Runtime, error) { return rt, nil }
	default:
		return fmt.Errorf("--runtime %q: want docker or sim", v.Runtime)
	}
	if advertise != "" && v.NodeName == "" && !viaHub {
		return errors.New("--advertise-address is the address of one node (--node-name); the nodes of --nodes each report their own")
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(v.Labels, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("--labels: %q is not k=v", kv)
		}
		labels[k] = v
	}

	var (
		cfg *rest.Config
		id  *hubconn.Identity
	)
	switch {
	case join:
		// The node is the one given, else the one the token joins.
		if id, err = hubconn.Join(ctx, hubconn.JoinOptions{Hub: v.Join.Hub, Token: v.Join.Token, CAHash: v.Join.CAHash, Node: v.NodeName, Dir: hubDir}); err != nil {
			return err
		}
		fmt.Printf("joined the hub as node %s\n", id.Node)
		if !v.Join.Run {
			return nil
		}
	case viaHub:
		if id, err = hubconn.Load(hubDir); err != nil {
			return err
		}
		if v.NodeName != "" && v.NodeName != id.Node {
			return fmt.Errorf("--node-name %s: this device joined the hub as node %s (%s), and its certificate is that node's alone", v.NodeName, id.Node, hubDir)
		}
	}
	if id != nil {
		v.NodeName = id.Node
		if id.LeaseNamespace != "" {
			if flagSet(fs, "lease-namespace") && o.LeaseNamespace != id.LeaseNamespace {
				return fmt.Errorf("--lease-namespace %s: the hub keeps node %s's Lease in %s", o.LeaseNamespace, id.Node, id.LeaseNamespace)
			}
			o.LeaseNamespace = id.LeaseNamespace
		}
		if cfg, err = id.RESTConfig(); err != nil {
			return err
		}
		o.Log.Info("Reaching the cluster through the edge hub", "hub", id.Server, "node", id.Node)
		go id.KeepRenewed(ctx, clock.RealClock{}, o.Log.WithName("hub-credentials"))
	} else if v.HubIdentities == "" {
		if cfg, err = config.GetConfig(); err != nil {
			return fmt.Errorf("%w: this device has neither joined the edge hub (edge-agent join --hub ... --token ... --ca-cert-hash ..., as kubectl edge node add prints it) nor a --kubeconfig", err)
		}
	}
	if cfg != nil {
		cfg.QPS, cfg.Burst = float32(v.QPS), v.Burst
	}
	o.Nodes = nodes(v.NodeName, advertise, v.NodePrefix, v.Nodes, strings.Split(v.Types, ","), strings.Split(v.Arches, ","), labels)
	if v.HubIdentities != "" {
		if o.NodeConfig, err = simulatedDevices(ctx, v.HubIdentities, o); err != nil {
			return err
		}
	}
	if v.PprofAddr != "" {
		if err := servePprof(ctx, v.PprofAddr); err != nil {
			return fmt.Errorf("--pprof-bind-address: %w", err)
		}
	}
	return agent.Run(ctx, cfg, o)
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

// flagSet says whether a flag was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func optionalRegexp(s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	return regexp.Compile(s)
}

// advertiseAddress is the address given to the one node played,
// --advertise-address or --address; "" leaves it to the node's connection.
func advertiseAddress(fs *flag.FlagSet, v *flags.Values) (string, error) {
	a := v.AdvertiseAddress
	if flagSet(fs, "address") {
		if flagSet(fs, "advertise-address") && v.Address != a {
			return "", fmt.Errorf("--address %q and --advertise-address %q: give one", v.Address, a)
		}
		a = v.Address
	}
	if a != "" && !edgev1alpha1.ValidAddress(a) {
		return "", fmt.Errorf("--advertise-address %q: %s", a, edgev1alpha1.AddressMessage)
	}
	return a, nil
}

// nodes names the nodes to play: one named node, which reports address
// (empty: the one its connection gives it), or count nodes
// <prefix>-<type>-<NN> with types and arches given in turn, each at an
// address of its own.
func nodes(name, address, prefix string, count int, types, arches []string, labels map[string]string) []agent.Node {
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
