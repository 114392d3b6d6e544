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

// Package flags builds edge-agent's command line. cmd/edge-agent parses
// it and hack/docs documents it from the same FlagSet, so that the
// command reference cannot drift from the flags.
package flags

import (
	"flag"
	goruntime "runtime"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
)

// DefaultStateDir is where a device keeps the agent's state (the systemd
// unit's StateDirectory).
const DefaultStateDir = "/var/lib/edge-agent"

// List is a flag that may be given many times.
type List []string

func (l *List) String() string     { return strings.Join(*l, ",") }
func (l *List) Set(v string) error { *l = append(*l, v); return nil }

// Join are the flags of edge-agent join.
type Join struct {
	Hub, Token, CAHash string
	Run                bool
}

func (j *Join) register(fs *flag.FlagSet) {
	fs.StringVar(&j.Hub, "hub", "", "join: the edge hub's URL, https://HOST:PORT, as kubectl edge node add prints it.")
	fs.StringVar(&j.Token, "token", "", "join: the one-time join token, ID.SECRET.")
	fs.StringVar(&j.CAHash, "ca-cert-hash", "", "join: the pin of the hub's CA, sha256:<hex>, as kubectl edge node add prints it.")
	fs.BoolVar(&j.Run, "run", true, "join: run the agent once joined; false stops once the identity is saved (installers, before the systemd unit starts the agent).")
}

// Values are what edge-agent's flags set.
type Values struct {
	Agent agent.Options
	Sim   sim.Options

	Runtime, NodeName, NodePrefix, Types, Arches, Labels, FailImages, CrashImages, PrintRBAC string
	SlowPulls, StallPulls                                                                    string
	Address, AdvertiseAddress, RuntimeEndpoint, ImageRegistry, PprofAddr, StateDir           string
	Nodes                                                                                    int
	QPS                                                                                      float64
	Burst                                                                                    int
	Silences                                                                                 List
	ShowVersion                                                                              bool
	HubIdentities                                                                            string
	// Join is set by edge-agent join's flags alone.
	Join Join
	Zap  zap.Options
}

// NewFlagSet returns the flags of cmd, edge-agent or, with join, edge-agent
// join, bound to Values at their defaults.
func NewFlagSet(cmd string, join bool) (*flag.FlagSet, *Values) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	v := &Values{Agent: agent.DefaultOptions(), Sim: sim.DefaultOptions()}
	o, so := &v.Agent, &v.Sim
	fs.StringVar(&v.Runtime, "runtime", "docker", "Container runtime: docker (the Docker Engine API of Docker or Podman), or sim (simulated nodes, for development, tests and scale runs).")
	fs.IntVar(&o.MaxInstances, "max-instances", o.MaxInstances, "Service instances the node holds, 1 to 2000, reported for placement; the EdgeNode's spec.maxInstances overrides it.")
	fs.IntVar(&o.MaxParallelImagePulls, "max-parallel-image-pulls", o.MaxParallelImagePulls, "Pulls of one node at once; 1 pulls one image at a time. Instances of one image share one pull.")
	fs.DurationVar(&o.ImagePullProgressDeadline, "image-pull-progress-deadline", o.ImagePullProgressDeadline, "A pull that makes no progress for this long is cut, and tried again after a back-off.")
	fs.StringVar(&v.RuntimeEndpoint, "runtime-endpoint", "", "docker: the engine's API address, e.g. unix:///run/podman/podman.sock; empty means DOCKER_HOST, else unix:///var/run/docker.sock.")
	fs.StringVar(&v.StateDir, "state-dir", DefaultStateDir, "Directory of the state file (<node>.json) that keeps the node's last desired state, to start from while the API server cannot be reached; with --runtime=sim it is kept only when this flag is given. Empty keeps none. Its hub directory keeps the identity of a device that joined the edge hub.")
	fs.DurationVar(&o.RuntimeProbeInterval, "runtime-probe-interval", o.RuntimeProbeInterval, "How often the engine is pinged; the node's RuntimeReady condition follows within one probe.")
	fs.StringVar(&v.ImageRegistry, "image-registry", "", "docker: registry prefixed to image repositories that name none, e.g. registry.plant-a.local:5000.")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", o.StopTimeout, "How long a container may take to exit when stopped before it is killed.")
	fs.DurationVar(&o.MinReportInterval, "min-report-interval", o.MinReportInterval, "How long a node holds its changes at most, from the first of them, while an instance is between two states (created but not yet running, say), to report them in one apply; a settled node reports them at once. 0 reports each change at once.")
	fs.DurationVar(&o.ResyncInterval, "resync-interval", o.ResyncInterval, "How often the runtime's containers are listed in full, besides its event stream.")
	fs.StringVar(&v.AdvertiseAddress, "advertise-address", "", "HOST:PORT where the node's agent is reached, reported in the EdgeNode's status.nodeInfo.address; with one node. "+
		"Empty: the host the agent's connection to the hub or kube-apiserver leaves from, port 7200. The EdgeNode's spec.address, when set, wins over it.")
	fs.StringVar(&v.Address, "address", "", "Same as --advertise-address.")
	fs.BoolVar(&v.ShowVersion, "version", false, "Print the version and exit.")
	fs.StringVar(&v.NodeName, "node-name", "", "Name of the one node this agent plays; empty plays --nodes nodes named after --node-prefix (sim), or the host name (docker).")
	fs.IntVar(&v.Nodes, "nodes", 1, "How many nodes to play, named <prefix>-<type>-<NN>.")
	fs.StringVar(&v.NodePrefix, "node-prefix", "edge", "Prefix of the names of the nodes played.")
	fs.StringVar(&v.Types, "types", "linux", "OS kinds of the nodes, comma-separated, given to the nodes in turn (e.g. linux,sylixos).")
	fs.StringVar(&v.Arches, "arches", goruntime.GOARCH, "Architectures of the nodes, comma-separated, given to the nodes in turn (e.g. amd64,arm64).")
	fs.StringVar(&v.Labels, "labels", "", "Labels of the nodes registered, as k=v,k2=v2.")
	fs.StringVar(&o.Namespace, "namespace", "", "Namespace of the EdgeServices to run; empty means every namespace.")
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace, "Namespace of the nodes' Leases.")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", o.LeaseDuration, "Duration written into each Lease.")
	fs.DurationVar(&o.RenewInterval, "renew-interval", o.RenewInterval, "How often each node renews its Lease.")
	fs.DurationVar(&so.StartDelay, "start-delay", so.StartDelay, "sim: how long a simulated container stays created before it runs.")
	fs.StringVar(&v.SlowPulls, "slow-pulls", "", "sim: regular expression: images of matching refs are absent, and a pull of one takes --pull-time.")
	fs.DurationVar(&so.PullTime, "pull-time", so.PullTime, "sim: how long a pull of a --slow-pulls image takes.")
	fs.StringVar(&v.StallPulls, "stall-pulls", "", "sim: regular expression: images of matching refs are absent, and a pull of one never makes progress.")
	fs.DurationVar(&o.FiguresInterval, "figures-interval", o.FiguresInterval, "The least time between two reports that changed cpu, memory and size figures alone ask for; state changes are reported at once, with the latest figures.")
	fs.DurationVar(&o.MetricsInterval, "metrics-interval", o.MetricsInterval, "How often cpu, memory and size figures are refreshed and reported; state changes are reported at once, and take figures half an interval old or more along.")
	fs.DurationVar(&o.Tick, "tick", o.Tick, "How often each node looks at its services.")
	fs.IntVar(&so.SystemContainers, "system-containers", so.SystemContainers, "sim: containers outside any EdgeService on each node.")
	fs.StringVar(&v.FailImages, "fail-images", "", "sim: regular expression: containers of matching image refs fail to start.")
	fs.StringVar(&v.CrashImages, "crash-images", "", "sim: regular expression: containers of matching image refs restart at every metrics refresh.")
	fs.Var(&v.Silences, "silence", "sim: node:after:for, e.g. edge-linux-01:30s:1m: the node goes silent (no Lease, no report) for a while. Repeatable.")
	fs.Float64Var(&v.QPS, "kube-api-qps", 20, "Queries per second to the API server, for all nodes together.")
	fs.IntVar(&v.Burst, "kube-api-burst", 40, "Burst of queries above --kube-api-qps.")
	fs.StringVar(&v.PprofAddr, "pprof-bind-address", "", "Address Go's /debug/pprof profiles bind to, unauthenticated: bind it to localhost. Empty disables it.")
	fs.StringVar(&v.HubIdentities, "hub-identities", "", "sim: play each node through the edge hub with the identity in <dir>/<node>/hub, as edge-agent join --run=false --state-dir <dir>/<node> saves it: one connection and certificate per simulated device, as real devices hold.")
	fs.StringVar(&v.PrintRBAC, "print-rbac", "", "Print the RBAC for an agent of the named node and exit.")
	if join {
		v.Join.register(fs)
	}
	config.RegisterFlags(fs)
	v.Zap.BindFlags(fs)
	return fs, v
}
