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
	goruntime "runtime"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/docker"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/hubapi"
	"github.com/edgeplane/edgeplane/internal/version"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "edge-agent:", err)
		os.Exit(1)
	}
}

// listFlag is a flag that may be given many times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// joinFlags are the flags of edge-agent join.
type joinFlags struct {
	hub, token, caHash string
	run                bool
}

func (j *joinFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.hub, "hub", "", "join: the edge hub's URL, https://HOST:PORT, as kubectl edge node add prints it.")
	fs.StringVar(&j.token, "token", "", "join: the one-time join token, ID.SECRET.")
	fs.StringVar(&j.caHash, "ca-cert-hash", "", "join: the pin of the hub's CA, sha256:<hex>, as kubectl edge node add prints it.")
	fs.BoolVar(&j.run, "run", true, "join: run the agent once joined; false stops once the identity is saved (installers, before the systemd unit starts the agent).")
}

// check validates the flags before anything is sent: a token joins once.
func (j *joinFlags) check(fs *flag.FlagSet, stateDir string) error {
	if j.hub == "" || j.token == "" || j.caHash == "" {
		return errors.New("edge-agent join needs --hub, --token and --ca-cert-hash, as kubectl edge node add prints them")
	}
	if _, err := hubconn.CheckHubURL(j.hub); err != nil {
		return err
	}
	if _, err := hubapi.ParseToken(j.token); err != nil {
		return fmt.Errorf("--token: %w", err)
	}
	if err := hubapi.CheckCAHash(j.caHash); err != nil {
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
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	o := agent.DefaultOptions()
	so := sim.DefaultOptions()
	var (
		runtime, name, prefix, types, arches, labelList, failImages, crashImages, printRBAC string
		slowPulls, stallPulls                                                               string
		address, endpoint, registry, pprofAddr, stateDir                                    string
		count                                                                               int
		qps                                                                                 float64
		burst                                                                               int
		silences                                                                            listFlag
		showVersion                                                                         bool
		hubIdentities                                                                       string
	)
	fs.StringVar(&runtime, "runtime", "docker", "Container runtime: docker (the Docker Engine API of Docker or Podman), or sim (simulated nodes, for development, tests and scale runs).")
	fs.IntVar(&o.MaxInstances, "max-instances", o.MaxInstances, "Service instances the node holds, 1 to 2000, reported for placement; the EdgeNode's spec.maxInstances overrides it.")
	fs.IntVar(&o.MaxParallelImagePulls, "max-parallel-image-pulls", o.MaxParallelImagePulls, "Pulls of one node at once; 1 pulls one image at a time. Instances of one image share one pull.")
	fs.DurationVar(&o.ImagePullProgressDeadline, "image-pull-progress-deadline", o.ImagePullProgressDeadline, "A pull that makes no progress for this long is cut, and tried again after a back-off.")
	fs.StringVar(&endpoint, "runtime-endpoint", "", "docker: the engine's API address, e.g. unix:///run/podman/podman.sock; empty means DOCKER_HOST, else unix:///var/run/docker.sock.")
	fs.StringVar(&stateDir, "state-dir", defaultStateDir, "Directory of the state file (<node>.json) that keeps the node's last desired state, to start from while the API server cannot be reached; with --runtime=sim it is kept only when this flag is given. Empty keeps none. Its hub directory keeps the identity of a device that joined the edge hub.")
	fs.DurationVar(&o.RuntimeProbeInterval, "runtime-probe-interval", o.RuntimeProbeInterval, "How often the engine is pinged; the node's RuntimeReady condition follows within one probe.")
	fs.StringVar(&registry, "image-registry", "", "docker: registry prefixed to image repositories that name none, e.g. registry.plant-a.local:5000.")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", o.StopTimeout, "How long a container may take to exit when stopped before it is killed.")
	fs.DurationVar(&o.MinReportInterval, "min-report-interval", o.MinReportInterval, "How long a node holds its changes, from the first of them, to report them in one apply (two reports are at least this far apart): 0 reports each change at once.")
	fs.DurationVar(&o.ResyncInterval, "resync-interval", o.ResyncInterval, "How often the runtime's containers are listed in full, besides its event stream.")
	fs.StringVar(&address, "address", "", "Address (host:port) of the node registered; with --node-name. Empty: 127.0.0.1:7200.")
	fs.BoolVar(&showVersion, "version", false, "Print the version and exit.")
	fs.StringVar(&name, "node-name", "", "Name of the one node this agent plays; empty plays --nodes nodes named after --node-prefix (sim), or the host name (docker).")
	fs.IntVar(&count, "nodes", 1, "How many nodes to play, named <prefix>-<type>-<NN>.")
	fs.StringVar(&prefix, "node-prefix", "edge", "Prefix of the names of the nodes played.")
	fs.StringVar(&types, "types", "linux", "OS kinds of the nodes, comma-separated, given to the nodes in turn (e.g. linux,sylixos).")
	fs.StringVar(&arches, "arches", goruntime.GOARCH, "Architectures of the nodes, comma-separated, given to the nodes in turn (e.g. amd64,arm64).")
	fs.StringVar(&labelList, "labels", "", "Labels of the nodes registered, as k=v,k2=v2.")
	fs.StringVar(&o.Namespace, "namespace", "", "Namespace of the EdgeServices to run; empty means every namespace.")
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace, "Namespace of the nodes' Leases.")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", o.LeaseDuration, "Duration written into each Lease.")
	fs.DurationVar(&o.RenewInterval, "renew-interval", o.RenewInterval, "How often each node renews its Lease.")
	fs.DurationVar(&so.StartDelay, "start-delay", so.StartDelay, "sim: how long a simulated container stays created before it runs.")
	fs.StringVar(&slowPulls, "slow-pulls", "", "sim: regular expression: images of matching refs are absent, and a pull of one takes --pull-time.")
	fs.DurationVar(&so.PullTime, "pull-time", so.PullTime, "sim: how long a pull of a --slow-pulls image takes.")
	fs.StringVar(&stallPulls, "stall-pulls", "", "sim: regular expression: images of matching refs are absent, and a pull of one never makes progress.")
	fs.DurationVar(&o.FiguresInterval, "figures-interval", o.FiguresInterval, "The least time between two reports that changed cpu, memory and size figures alone ask for; state changes are reported at once, with the latest figures.")
	fs.DurationVar(&o.MetricsInterval, "metrics-interval", o.MetricsInterval, "How often cpu, memory and size figures are refreshed and reported; state changes are reported at once, and take figures half an interval old or more along.")
	fs.DurationVar(&o.Tick, "tick", o.Tick, "How often each node looks at its services.")
	fs.IntVar(&so.SystemContainers, "system-containers", so.SystemContainers, "sim: containers outside any EdgeService on each node.")
	fs.StringVar(&failImages, "fail-images", "", "sim: regular expression: containers of matching image refs fail to start.")
	fs.StringVar(&crashImages, "crash-images", "", "sim: regular expression: containers of matching image refs restart at every metrics refresh.")
	fs.Var(&silences, "silence", "sim: node:after:for, e.g. edge-linux-01:30s:1m: the node goes silent (no Lease, no report) for a while. Repeatable.")
	fs.Float64Var(&qps, "kube-api-qps", 20, "Queries per second to the API server, for all nodes together.")
	fs.IntVar(&burst, "kube-api-burst", 40, "Burst of queries above --kube-api-qps.")
	fs.StringVar(&pprofAddr, "pprof-bind-address", "", "Address Go's /debug/pprof profiles bind to, unauthenticated: bind it to localhost. Empty disables it.")
	fs.StringVar(&hubIdentities, "hub-identities", "", "sim: play each node through the edge hub with the identity in <dir>/<node>/hub, as edge-agent join --run=false --state-dir <dir>/<node> saves it: one connection and certificate per simulated device, as real devices hold.")
	fs.StringVar(&printRBAC, "print-rbac", "", "Print the RBAC for an agent of the named node and exit.")
	var jf joinFlags
	if join {
		jf.register(fs)
	}
	config.RegisterFlags(fs)
	zopts := zap.Options{}
	zopts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if join && fs.NArg() > 0 {
		return fmt.Errorf("edge-agent join: unexpected argument %q", fs.Arg(0))
	}
	if !join && fs.Arg(0) == "join" {
		return errors.New("join is a subcommand: it comes before the flags (edge-agent join --hub ...)")
	}
	if showVersion {
		fmt.Println(version.String("edge-agent"))
		return nil
	}
	if printRBAC != "" {
		fmt.Print(agent.RBAC(printRBAC, o.LeaseNamespace))
		return nil
	}
	if join {
		if err := jf.check(fs, stateDir); err != nil {
			return err
		}
	}
	if o.MaxInstances < 1 || o.MaxInstances > 2000 {
		return fmt.Errorf("--max-instances %d: must be 1 to 2000 (status.containers holds 2,048 entries, some for containers edgeplane does not manage)", o.MaxInstances)
	}
	// Through the hub when joining, or when the device joined and no
	// --kubeconfig is given: the identity it joined with beats a KUBECONFIG
	// that happens to be set.
	hubDir := ""
	if stateDir != "" {
		hubDir = filepath.Join(stateDir, "hub")
	}
	viaHub := join || (!flagSet(fs, "kubeconfig") && hubDir != "" && hubconn.Joined(hubDir))
	if viaHub && count > 1 {
		return fmt.Errorf("--nodes %d: a hub identity is one node's (%s); play many nodes with --kubeconfig, straight to the API server", count, hubDir)
	}
	o.StateDir = stateDir
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	o.Log = ctrl.Log.WithName("edge-agent")
	var simSilences []sim.Silence
	switch runtime {
	case "sim":
		if !flagSet(fs, "state-dir") {
			o.StateDir = "" // simulated containers do not outlive the process
		}
		var err error
		for _, re := range []struct {
			flag, v string
			to      **regexp.Regexp
		}{{"fail-images", failImages, &so.FailImages}, {"crash-images", crashImages, &so.CrashImages}, {"slow-pulls", slowPulls, &so.SlowPulls}, {"stall-pulls", stallPulls, &so.StallPulls}} {
			if *re.to, err = optionalRegexp(re.v); err != nil {
				return fmt.Errorf("--%s: %w", re.flag, err)
			}
		}
		for _, s := range silences {
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
		if join && !jf.run {
			break // nothing to run
		}
		if name == "" && !viaHub {
			host, err := os.Hostname()
			if err != nil {
				return fmt.Errorf("--node-name: %w", err)
			}
			name = host
		}
		rt, err := docker.New(docker.Options{Endpoint: endpoint, Registry: registry})
		if err != nil {
			return err
		}
		defer func() { _ = rt.Close() }()
		o.NewRuntime = func(agent.Node, int) (agent.Runtime, error) { return rt, nil }
	default:
		return fmt.Errorf("--runtime %q: want docker or sim", runtime)
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(labelList, ",") {
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
		err error
	)
	switch {
	case join:
		// The node is the one given, else the one the token joins.
		if id, err = hubconn.Join(ctx, hubconn.JoinOptions{Hub: jf.hub, Token: jf.token, CAHash: jf.caHash, Node: name, Dir: hubDir}); err != nil {
			return err
		}
		fmt.Printf("joined the hub as node %s\n", id.Node)
		if !jf.run {
			return nil
		}
	case viaHub:
		if id, err = hubconn.Load(hubDir); err != nil {
			return err
		}
		if name != "" && name != id.Node {
			return fmt.Errorf("--node-name %s: this device joined the hub as node %s (%s), and its certificate is that node's alone", name, id.Node, hubDir)
		}
	}
	if id != nil {
		name = id.Node
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
	} else if hubIdentities == "" {
		if cfg, err = config.GetConfig(); err != nil {
			return fmt.Errorf("%w: this device has neither joined the edge hub (edge-agent join --hub ... --token ... --ca-cert-hash ..., as kubectl edge node add prints it) nor a --kubeconfig", err)
		}
	}
	if cfg != nil {
		cfg.QPS, cfg.Burst = float32(qps), burst
	}
	o.Nodes = nodes(name, address, prefix, count, strings.Split(types, ","), strings.Split(arches, ","), labels)
	if hubIdentities != "" {
		if o.NodeConfig, err = simulatedDevices(ctx, hubIdentities, o); err != nil {
			return err
		}
	}
	if pprofAddr != "" {
		if err := servePprof(ctx, pprofAddr); err != nil {
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

// defaultStateDir is where a device keeps the agent's state (the systemd
// unit's StateDirectory).
const defaultStateDir = "/var/lib/edge-agent"

func optionalRegexp(s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	return regexp.Compile(s)
}

// nodes names the nodes to play: one named node, or count nodes
// <prefix>-<type>-<NN> with types and arches given in turn.
func nodes(name, address, prefix string, count int, types, arches []string, labels map[string]string) []agent.Node {
	if name != "" {
		if address == "" {
			address = "127.0.0.1:7200"
		}
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
