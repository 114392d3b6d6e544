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

// Command scale is the scale run (make scale): a control plane, the real
// manager and edge-agent binaries, N simulated nodes and M services on one
// machine. It reports the time until every instance succeeded, the memory
// of the manager and the API server, the API writes per second, and the
// facade's latency while all of it happens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"go.uber.org/zap/zapcore"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/apiprofile"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
)

func main() {
	var (
		nodes, services, factor int
		bin, profiles           string
		withReplica, agentWatch bool
		measureWrites           bool
		viaHub, killHub         bool
		restOnly, stages, cbor  bool
		managerQPS, concurrency int
		timeout, outage         time.Duration
		convergeWithin          time.Duration
	)
	flag.IntVar(&nodes, "nodes", 1000, "Simulated nodes.")
	flag.IntVar(&services, "services", 5000, "Dynamic services.")
	flag.IntVar(&factor, "factor", 2, "Instances per service.")
	profile := flag.String("profile", "narrow", "narrow: --services services of --factor instances; wide: 5 services of one instance per node (a service run on every gateway), then one spec change timed until every instance runs it.")
	flag.IntVar(&managerQPS, "manager-qps", 200, "--kube-api-qps of the manager (burst twice that).")
	flag.IntVar(&concurrency, "concurrency", 4, "--concurrency of the manager; 4 is its default. 8 converges about 10 % sooner and costs the facade's p99 1-2 ms (docs/design/0010-manager-concurrency-and-processors.md).")
	flag.StringVar(&bin, "bin", "bin", "Directory of the manager and edge-agent binaries.")
	flag.DurationVar(&timeout, "timeout", 20*time.Minute, "Give up after this long.")
	flag.DurationVar(&convergeWithin, "converge-within", 0, "Stop waiting for every instance after this long and report the figures of that time, success_s NaN; 0 waits until --timeout.")
	balance := flag.String("balance", "", "Balance the socket handed down as descriptor 3 over these hub replicas, comma-separated (the run starts itself so for fleets of more than 8,000 devices).")
	trivialHandler := flag.String("trivial-handler", "", "Serve only a trivial handler on this address (the run starts itself so).")
	balancer := flag.String("balancer", "kernel", "How the devices reach the hub replicas through one address: kernel (DNAT rules in the nat table, as kube-proxy's iptables mode does for a Service; needs root and iptables, else a balancer process is used and said) or process (a loopback proxy in this process, or processes of its own past 8,000 devices, that copies every byte).")
	devicesNice := flag.Int("devices-nice", 0, "Run the simulated devices and the hub's balancer (then in a process of its own) at this nice value (1-19), so that they take only the CPU the control plane leaves, as devices and a load balancer with CPUs of their own would.")
	facadeLoad := flag.Bool("facade-load", true, "Load the facade with readers while the services converge (false: the rollout alone, as make scale-peer compares it with plain Kubernetes, which has no such readers).")
	flag.BoolVar(&withReplica, "replica", false, "Also run a read replica (the manager with --controllers=false) and load its facade like the leader's.")
	console := flag.Bool("console", false, "After convergence, open the web console's overview in headless Chromium: the time to its first complete overview, and the facade requests per second one open tab costs over a minute.")
	flag.BoolVar(&agentWatch, "agent-watches", true, "Open one watch per node of its node's assignment by name, as each real agent holds (the simulator itself shares a few).")
	flag.BoolVar(&measureWrites, "write-cost", false, "With every node online and before the run's services, time rounds of spec changes of a 2-instance service against rest windows: kube-apiserver's CPU per change and the events its agents' watches get (make scale-curve turns it on).")
	flag.DurationVar(&outage, "outage", 0, "After convergence, stop the API server (SIGSTOP) this long, as a WAN outage looks to every agent at once, and compare the writes per second in the minute after with the steady rate; 0 skips it.")
	flag.StringVar(&profiles, "profiles", "", "Directory to write 30 s CPU profiles of the manager, the agent, the hub replicas and the API server into, taken from the first create.")
	flag.BoolVar(&viaHub, "hub", true, "Run the fleet through the edge hub: two hub replicas (bin/manager with only the hub on) behind a loopback balancer, every node added and joined as kubectl edge node add and edge-agent join do (timed: join: ...), then the simulator playing each node with its own identity, TLS connection and watch through the hub (--hub-identities). false: every node straight to the API server with Leases (direct mode, the figures before the hub).")
	flag.BoolVar(&killHub, "kill-hub", false, "With --hub: once every node is online and the rest window measured, kill -9 one hub replica, time until every node's Lease names the other, count the nodes declared offline meanwhile (hub_kill: ...), then run the services as usual.")
	flag.BoolVar(&restOnly, "rest-only", false, "Stop after the figures at rest (and --kill-hub's): no services.")
	flag.BoolVar(&stages, "stages", false, "From the first create until every instance is successful, CPU profiles of kube-apiserver, 30 s at a time, split by the stage of the work (apiserver_stages: system=edgeplane cpu_s= gc_pct= admission_pct= managed_fields_pct= validation_pct= decode_pct= encode_pct= etcd_pct= watch_pct= filters_pct= network_pct= other_pct=); not with --profiles, which profiles kube-apiserver too.")
	flag.BoolVar(&cbor, "cbor", false, "Turn on kube-apiserver's CBORServingAndStorage gate (KEP-4222, alpha): custom resources stored in etcd as CBOR. Every client still speaks JSON: controller-runtime's clients register no CBOR serializer.")
	flag.DurationVar(&idleWindow, "rest-window", idleWindow, "How long the figures at rest are measured, every node online and no service.")
	flag.Parse()
	wide := false
	switch *profile {
	case "narrow":
	case "wide":
		wide, services, factor = true, 5, nodes
	default:
		fmt.Fprintf(os.Stderr, "scale: --profile %q: narrow or wide\n", *profile)
		os.Exit(2)
	}
	if *trivialHandler != "" {
		serveTrivial(*trivialHandler)
		return
	}
	if *balance != "" {
		serveBalancer(*balance)
		return
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	if killHub && !viaHub {
		fmt.Fprintln(os.Stderr, "scale: --kill-hub needs --hub")
		os.Exit(2)
	}
	if *balancer != "kernel" && *balancer != "process" {
		fmt.Fprintf(os.Stderr, "scale: --balancer %q: want kernel or process\n", *balancer)
		os.Exit(2)
	}
	if stages && profiles != "" {
		fmt.Fprintln(os.Stderr, "scale: --stages and --profiles both profile kube-apiserver, which takes one CPU profile at a time: give one")
		os.Exit(2)
	}
	// The simulator holds a socket per device, and so does this process
	// while the balancer is in it (twice); processes inherit the limit.
	want := nodes + 4096
	if viaHub && *balancer == "kernel" {
		if err := kernelBalancing(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "scale: the kernel cannot balance here (%v): a balancer process instead\n", err)
			*balancer = "process"
		}
	}
	if *balancer == "process" && balancerProcs(nodes, *devicesNice > 0) == 0 {
		want += 2 * nodes
	}
	raiseFileLimit(want)
	// An interrupt or a termination ends the run as its deadline does:
	// every process it started is stopped on the way out.
	sctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(sctx, timeout)
	managerFlags := []string{"--kube-api-qps", strconv.Itoa(managerQPS), "--kube-api-burst", strconv.Itoa(2 * managerQPS), "--concurrency", strconv.Itoa(concurrency)}
	if err := run(ctx, runOptions{nodes: nodes, services: services, factor: factor, managerFlags: managerFlags, bin: bin, profiles: profiles,
		withReplica: withReplica, facadeLoad: *facadeLoad, devicesNice: *devicesNice, agentWatch: agentWatch && !viaHub, console: *console, outage: outage, convergeWithin: convergeWithin, wide: wide, writeCost: measureWrites,
		hub: viaHub, kernelBalancer: *balancer == "kernel", killHub: killHub, restOnly: restOnly, stages: stages, cbor: cbor}); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		cancel()
		stopSignals()
		os.Exit(1)
	}
	cancel()
	stopSignals()
}

// raiseFileLimit lets this process and the ones it starts hold want
// files: the balancer holds two sockets per device, the simulator one.
// Raising the hard limit needs CAP_SYS_RESOURCE; without it the run goes
// on with what it has, and spreads the balancer over processes past 8,000
// devices.
func raiseFileLimit(want int) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur >= uint64(want) {
		return
	}
	raised := l
	raised.Cur, raised.Max = uint64(want), max(l.Max, uint64(want))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		// Without CAP_SYS_RESOURCE the hard limit stays: take all of it.
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
		fmt.Fprintf(os.Stderr, "scale: %d open files wanted, %d allowed (%v)\n", want, l.Max, err)
	}
}

// runOptions are what one run is asked to do.
type runOptions struct {
	nodes, services, factor int
	managerFlags            []string
	bin, profiles           string
	withReplica, agentWatch bool
	// facadeLoad loads the facades (and the trivial handler) while the
	// services converge.
	facadeLoad bool
	// devicesNice, when above 0, is the CPU priority of the simulated
	// devices and the balancer.
	devicesNice            int
	console, wide          bool
	writeCost              bool
	outage, convergeWithin time.Duration
	// hub runs the fleet through two hub replicas; killHub kills one at
	// rest; restOnly stops after the figures at rest.
	hub, killHub, restOnly bool
	// stages splits kube-apiserver's CPU during convergence by stage.
	stages bool
	// kernelBalancer balances the devices over the hub replicas with DNAT
	// rules rather than a balancer process.
	kernelBalancer bool
	// cbor turns on kube-apiserver's alpha CBOR storage gate (--cbor).
	cbor bool
}

func run(ctx context.Context, o runOptions) error {
	nodes, services, factor, bin := o.nodes, o.services, o.factor, o.bin
	dir, err := os.MkdirTemp("", "edgeplane-scale")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	auditArgs, auditLog, err := writeAuditPolicy(dir)
	if err != nil {
		return err
	}
	env, cfg, c, err := testenv.Start(func(env *envtest.Environment) error {
		for k, v := range auditArgs {
			env.ControlPlane.GetAPIServer().Configure().Set(k, v)
		}
		if o.cbor {
			env.ControlPlane.GetAPIServer().Configure().Set("feature-gates", CBORGate)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		return err
	}
	for _, ns := range []string{leaseNamespace, hubs.Namespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	managerKubeconfig, agentsKubeconfig, hubKubeconfig, err := identities(ctx, env, c, dir)
	if err != nil {
		return err
	}

	const facade, managerPprof, agentPprof, trivialAddr, replicaFacade = "127.0.0.1:18090", "127.0.0.1:18091", "127.0.0.1:18092", "127.0.0.1:18093", "127.0.0.1:18094"
	manager, err := procs.Start(ctx, dir, "manager", filepath.Join(bin, "manager"), append([]string{"--kubeconfig", managerKubeconfig, "--metrics-bind-address", "0", "--pprof-bind-address", managerPprof,
		"--health-probe-bind-address", "0", "--api-bind-address", facade}, o.managerFlags...)...)
	if err != nil {
		return err
	}
	defer procs.Stop(manager)
	// The API server and etcd, measured from the agent's start: the nodes'
	// registration is theirs to carry.
	apiserverPID, err := testenv.APIServerPID(cfg)
	if err != nil {
		return err
	}
	servers := map[string]int{"kube-apiserver": apiserverPID}
	if etcdPID, err := testenv.EtcdPID(env); err == nil {
		servers["etcd"] = etcdPID
	} else {
		fmt.Fprintln(os.Stderr, "etcd's CPU and memory are not measured:", err)
	}
	// Through the hub, the devices join first, each with a token of its
	// own, and the simulator then plays each with the identity it got.
	var hub *hubRun
	var joined joinFigures
	// The control plane's own watches, before any replica or node.
	controlPlaneWatches := settledWatches(ctx, cfg)
	fmt.Printf("kube-apiserver holds %.0f watches before any hub replica or node\n", controlPlaneWatches)
	var base baseline
	base.apiserverRSS, _ = procs.RSS(servers["kube-apiserver"])
	base.etcdBytes = etcdInUse(ctx, env)
	agentArgs := []string{"--kubeconfig", agentsKubeconfig, "--kube-api-qps", strconv.Itoa(agentQPS(nodes)), "--kube-api-burst", strconv.Itoa(2 * agentQPS(nodes))}
	// This binary serves the trivial handler and, for a fleet larger than
	// one process's sockets, the hub's balancer.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if o.hub {
		if hub, err = startHubs(ctx, c, dir, bin, self, hubKubeconfig, 2, nodes, o.kernelBalancer, o.devicesNice > 0); err != nil {
			return err
		}
		defer hub.Stop()
		if hub.kernel != nil {
			fmt.Printf("the devices reach the hub replicas at %s through the kernel's DNAT rules (chain %s), as through a Service with kube-proxy\n", hub.kernel.vip, hub.kernel.chain)
		}
		for i := range hub.names {
			rss, _ := procs.RSS(hub.Pid(i))
			base.hubRSS += rss
		}
		ids := filepath.Join(dir, "identities")
		if joined, err = joinFleet(ctx, cfg, hub, simNodes(nodes), ids); err != nil {
			return err
		}
		fmt.Printf("%d nodes added and joined through the hub in %v; API writes meanwhile, by verb and resource:%s\n", nodes, joined.took.Round(100*time.Millisecond), joined.writesByRequest)
		fmt.Println(joined)
		agentArgs = []string{"--hub-identities", ids}
	}
	registering := procs.CPUTimes(servers)
	agentCmd, err := procs.Start(ctx, dir, "agent", filepath.Join(bin, "edge-agent"), append(agentArgs, "--runtime", "sim", "--nodes", strconv.Itoa(nodes), "--node-prefix", simPrefix,
		"--types", simTypes, "--arches", simArches, "--renew-interval", "10s", "--metrics-interval", "60s", "--tick", "1s", "--min-report-interval", "2s",
		"--start-delay", "1s", "--pprof-bind-address", agentPprof)...)
	if err != nil {
		return err
	}
	agentStarted := time.Now()
	if o.devicesNice > 0 {
		devices := map[string]int{"edge-agent": agentCmd.Process.Pid}
		if hub != nil {
			maps.Copy(devices, hub.balancers)
		}
		deprioritize(o.devicesNice, devices)
	}
	// The processes profiled with --profiles, by their pprof address.
	pprofs := map[string]string{"manager": managerPprof, "edge-agent": agentPprof}
	if o.profiles != "" {
		if hub != nil {
			for i, name := range hub.names {
				pprofs[name] = hub.pprofs[i]
			}
		}
		go profileRegistration(ctx, cfg, o.profiles, pprofs)
	}
	defer procs.Stop(agentCmd)
	// The baseline for the facade's latency: a trivial handler in a process
	// of its own, loaded the same way at the same time.
	trivial, err := procs.Start(ctx, dir, "trivial", self, "--trivial-handler", trivialAddr)
	if err != nil {
		return err
	}
	defer procs.Stop(trivial)
	pids := map[string]int{"manager": manager.Process.Pid, "edge-agent": agentCmd.Process.Pid, "scale client and facade load": os.Getpid(), "trivial handler": trivial.Process.Pid}
	if hub != nil {
		hub.pids(pids)
	}
	// Every process's CPU from the agent's start until every node is
	// online: the registration's cost is not only the API server's.
	all := maps.Clone(pids)
	maps.Copy(all, servers)
	registeringAll := procs.CPUTimes(all)
	maps.Copy(registeringAll, registering)
	replicaURL := ""
	if o.withReplica {
		// A facade in a process of its own, as the chart's second replica
		// serves it: the manager with --controllers=false. Its informers
		// cost the API server and the machine some CPU.
		replica, err := procs.Start(ctx, dir, "replica", filepath.Join(bin, "manager"), "--kubeconfig", managerKubeconfig, "--controllers=false", "--metrics-bind-address", "0",
			"--health-probe-bind-address", "0", "--api-bind-address", replicaFacade)
		if err != nil {
			return err
		}
		defer procs.Stop(replica)
		pids["read replica"], replicaURL = replica.Process.Pid, "http://"+replicaFacade
	}

	view, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return err
	}
	go func() { _ = view.Start(ctx) }()
	if !view.WaitForCacheSync(ctx) {
		return errors.New("the run's own watch did not sync")
	}

	began := time.Now()
	if err := procs.WaitFor(ctx, "every node online", 500*time.Millisecond, func() (bool, error) {
		list := &edgev1alpha1.EdgeNodeList{}
		// Read only: a copy of every node twice a second is the run's
		// own CPU taken from the two cores the registration needs.
		if err := view.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		online := 0
		for _, n := range list.Items {
			if n.Status.Status == edgev1alpha1.NodeOnline {
				online++
			}
		}
		return online == nodes, nil
	}); err != nil {
		return err
	}
	online := time.Since(agentStarted)
	registered := procs.CPUTimes(all)
	fmt.Printf("%d nodes registered and online %v after the agent started; CPU meanwhile:%s\n", nodes, online.Round(100*time.Millisecond), procs.CPUUse(registeringAll, registered, 0))
	fmt.Println(onlineLine(nodes, online, registeringAll, registered, goruntime.NumCPU()))
	if hub != nil {
		// Every device's watch of its assignment open at a replica: the
		// hub's share of what the agents cost.
		if err := procs.WaitFor(ctx, "a watch per node at the hub", time.Second, func() (bool, error) {
			return hub.watches(ctx) >= float64(nodes), nil
		}); err != nil {
			return err
		}
	}

	requestsBefore, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return err
	}
	writesBefore := writes(requestsBefore)
	mem := &peaks{}
	// Peaks are taken until every instance succeeded, not while the run
	// reads its audit log afterwards.
	mctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	maps.Copy(pids, servers)
	go mem.sample(mctx, pids)
	lat := &latencies{}
	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	first := &edgev1alpha1.EdgeNode{}
	if err := view.Get(ctx, client.ObjectKey{Name: "edge-linux-01"}, first); err != nil {
		return err
	}
	delivered := func() int64 { return 0 }
	if o.agentWatch {
		list := &edgev1alpha1.EdgeNodeList{}
		if err := view.List(ctx, list); err != nil {
			return err
		}
		names := make([]string, 0, len(list.Items))
		for _, n := range list.Items {
			names = append(names, n.Name)
		}
		if delivered, err = agentWatches(ctx, cfg, names); err != nil {
			return err
		}
		if err := procs.WaitFor(ctx, "a watch per node", time.Second, func() (bool, error) {
			return openWatches(ctx, cfg) >= float64(nodes), nil
		}); err != nil {
			return err
		}
	}
	if hub != nil {
		// The events the replicas wrote to the devices' watches.
		delivered = func() int64 { return hub.relayed(ctx) }
	}
	// What the nodes cost at rest (Lease renewals, the controllers'
	// liveness checks), so that the CPU of the run can be split into that
	// and the services' share.
	restWritesStart, err := serverWrites(ctx, cfg)
	if err != nil {
		return err
	}
	idleStart, machineStart := procs.CPUTimes(pids), machineCPU()
	time.Sleep(idleWindow)
	idleEnd, machineEnd := procs.CPUTimes(pids), machineCPU()
	restWritesEnd, err := serverWrites(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("CPU at rest with %d nodes online, before any service, in %% of one core:%s\n", nodes, procs.CPUUse(idleStart, idleEnd, idleWindow))
	rest := restCost(ctx, cfg, env, pids, nodes, idleEnd["kube-apiserver"]-idleStart["kube-apiserver"], (restWritesEnd-restWritesStart)/idleWindow.Seconds())
	if hub != nil {
		rest.hub(pids, hub.names, idleStart, idleEnd)
	}
	rest.fleetWatches = rest.watches - controlPlaneWatches
	rest.othersCores = others(idleStart, idleEnd, machineStart, machineEnd, idleWindow)
	fmt.Println(rest)
	fmt.Println(rest.line())
	fmt.Println(projectionLine(projectTo, rest, base, joined, online))
	// Read after the rest window, when the audit log holds the whole
	// registration.
	if counts, err := auditWrites(auditLog, agentStarted, agentStarted.Add(online)); err == nil {
		table, _ := breakdown(counts, "/node", nodes)
		fmt.Printf("API writes from the agent's start until every node was online:\n%s", table)
	}
	if o.killHub {
		line, err := killHub(ctx, view, hub, nodes)
		if err != nil {
			return err
		}
		fmt.Println(line)
	}
	if o.restOnly {
		fmt.Println(curveLine(nodes, online, 0, math.NaN(), rest, mem, nil, math.NaN(), o.hub, joined))
		return nil
	}
	perChange := math.NaN()
	if o.writeCost {
		line, median, err := writeCost(ctx, c, view, apiserverPID, delivered)
		if err != nil {
			return err
		}
		fmt.Println(line)
		perChange = median
	}
	cpuBefore, machineBefore := procs.CPUTimes(pids), machineCPU()
	var profiling sync.WaitGroup
	if o.profiles != "" {
		profiling.Go(func() { takeProfiles(ctx, cfg, o.profiles, pprofs) })
	}
	stagesDone := make(chan struct{})
	if o.stages {
		profiling.Go(func() {
			line, err := apiprofile.Server(ctx, cfg, "edgeplane", stagesDone)
			if err != nil {
				fmt.Fprintln(os.Stderr, "kube-apiserver's stages:", err)
				return
			}
			fmt.Println(line)
		})
	}
	// Every agent report reaches a watch of EdgeNodes: the run's own
	// would be work the peer's view of Nodes (kwok renews Leases, not
	// their status) does not pay. Only an outage run reads them again.
	if o.outage == 0 {
		if err := view.RemoveInformer(ctx, &edgev1alpha1.EdgeNode{}); err != nil {
			return err
		}
	}
	requestsBegan, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return err
	}
	began = time.Now()
	if err := createServices(ctx, c, services, factor); err != nil {
		return err
	}
	created := time.Since(began)
	svc := &edgev1alpha1.EdgeService{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "svc-00000"}, svc); err != nil {
		return err
	}
	if o.facadeLoad {
		go lat.load(lctx, "http://"+facade, replicaURL, "http://"+trivialAddr, string(first.UID), string(svc.UID))
	}
	// A size the machine cannot converge in reasonable time still gives
	// its figures: after convergeWithin the run reports how far it got.
	wctx, stopWaiting := ctx, context.CancelFunc(func() {})
	if o.convergeWithin > 0 {
		wctx, stopWaiting = context.WithTimeout(ctx, o.convergeWithin)
	}
	defer stopWaiting()
	done := 0
	err = procs.WaitFor(wctx, "every instance successful", 500*time.Millisecond, func() (bool, error) {
		list := &edgev1alpha1.EdgeServiceList{}
		// Read only: no copy of every service twice a second.
		if err := view.List(ctx, list, client.InNamespace("default"), client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		done = 0
		for _, s := range list.Items {
			if s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == int32(factor) && s.Status.Replicas == int32(factor) {
				done++
			}
		}
		return done == services, nil
	})
	converged := err == nil
	if !converged && (ctx.Err() != nil || wctx.Err() == nil) {
		return err
	}
	took := time.Since(began)
	successS := took.Seconds()
	if !converged {
		successS = math.NaN()
		fmt.Printf("not converged: %d of %d services had every instance successful after %v; the figures below are of that time\n", done, services, took.Round(time.Second))
	}
	// How far it got, on the run's page too when it did not converge.
	fmt.Printf("converged: services=%d done=%d after_s=%.1f\n", services, done, took.Seconds())
	cpuAfter, machineAfter := procs.CPUTimes(pids), machineCPU()
	stopSampling()
	stopLoad()
	close(stagesDone)
	profiling.Wait()
	requestsAfter, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return err
	}
	writesAfter := writes(requestsAfter)
	if o.console {
		// After convergence and with the facade's load stopped: what one
		// person with the console open sees and costs.
		line, err := consoleCost(ctx, "http://"+facade)
		if err != nil {
			return err
		}
		fmt.Println(line)
	}

	if o.wide && converged {
		line, err := wideChange(ctx, c, view, factor)
		if err != nil {
			return err
		}
		fmt.Println(line)
	}
	fmt.Printf("%d services x %d instances created in %v; all successful after %v\n", services, factor, created.Round(time.Millisecond), took.Round(time.Millisecond))
	fmt.Printf("API writes during convergence: %.0f, %.0f/s\n", writesAfter-writesBefore, (writesAfter-writesBefore)/took.Seconds())
	if o.agentWatch {
		fmt.Printf("events delivered to the %d agents' watches: %d; watches the API server closed for falling behind: %.0f\n", nodes, delivered(), terminatedWatches(ctx, cfg))
	}
	if hub != nil {
		fmt.Printf("events the hub wrote to the %d devices' watches: %d; watches the API server closed for falling behind: %.0f\n", nodes, delivered(), terminatedWatches(ctx, cfg))
	}
	fmt.Printf("API reads during convergence, by verb and resource:%s\n", reads(requestsBefore, requestsAfter))
	fmt.Printf("peak resident memory: %s\n", mem.String())
	fmt.Printf("CPU used during convergence (%d cores give %.0f s):%s\n", goruntime.NumCPU(), float64(goruntime.NumCPU())*took.Seconds(), procs.CPUUse(cpuBefore, cpuAfter, 0))
	fmt.Printf("CPU other processes on the machine used meanwhile: %.1f s, %.2f cores\n", others(cpuBefore, cpuAfter, machineBefore, machineAfter, took)*took.Seconds(), others(cpuBefore, cpuAfter, machineBefore, machineAfter, took))
	fmt.Printf("facade latency under that load (the leader's, a read replica's if run, and a trivial handler's): %s\n", lat.String())
	if o.withReplica {
		fmt.Printf("worst facade p99: leader %.1f ms, read replica %.1f ms\n", lat.worstP99(false).Seconds()*1000, lat.worstP99(true).Seconds()*1000)
	}
	fmt.Printf("object sizes as the API server holds them (JSON bytes, of which managedFields):%s\n", objectSizes(ctx, c))

	// The audit log is written in batches: give the last one time to land.
	time.Sleep(3 * time.Second)
	instances := services * factor
	counts, err := auditWrites(auditLog, began, began.Add(took))
	if err != nil {
		return err
	}
	table, audited := breakdown(counts, "/instance", instances)
	fmt.Printf("API writes by resource, verb and field manager (audit log), from the first create until every instance succeeded:\n%s", table)
	// The figure is the API server's own counter; the audit log, which
	// splits it by field manager, must agree with it.
	writes := int(writesBeyondLeases(requestsAfter) - writesBeyondLeases(requestsBegan))
	fmt.Printf("API writes but Leases meanwhile: %d by apiserver_request_total, %d in the audit log\n", writes, audited)
	if math.Abs(float64(audited-writes)) > 0.02*float64(writes) {
		fmt.Fprintf(os.Stderr, "scale: the audit log holds %d writes where apiserver_request_total counted %d: its breakdown is incomplete\n", audited, writes)
	}
	// The API server's CPU beyond what it spends at rest, per write: what
	// the services cost it, and the least time those writes take with both
	// cores given to the API server and nothing else running.
	const api = "kube-apiserver"
	atRest := float64(idleEnd[api]-idleStart[api]) / float64(idleWindow) * float64(took)
	work := time.Duration(float64(cpuAfter[api]-cpuBefore[api]) - atRest)
	fmt.Printf("API server CPU for the services: %.1f s beyond rest, %.2f ms per write; those %d writes alone need %.1f s of all %d cores\n",
		work.Seconds(), work.Seconds()*1000/float64(writes), writes, work.Seconds()/float64(goruntime.NumCPU()), goruntime.NumCPU())
	if o.outage > 0 {
		line, err := reconnect(ctx, cfg, view, nodes, apiserverPID, o.outage, auditLog)
		if err != nil {
			return err
		}
		fmt.Println(line)
	}
	apiCPU := cpuAfter[api] - cpuBefore[api]
	fmt.Printf("scale: nodes=%d instances=%d success_s=%.1f writes_per_instance=%.2f manager_rss_mib=%d facade_p99_ms=%.1f apiserver_cpu_s=%.1f apiserver_cpu_ms_per_instance=%.2f\n",
		nodes, instances, successS, float64(writes)/float64(instances), mem.peak("manager")>>20, lat.worstP99ms(),
		apiCPU.Seconds(), float64(apiCPU.Microseconds())/1000/float64(instances))
	// One point of make scale-curve: what the size costs at rest and in
	// the run.
	fmt.Println(curveLine(nodes, online, instances, successS, rest, mem, lat, perChange, o.hub, joined))
	return nil
}

// curveLine is one point of make scale-curve: what the size costs at rest
// and in the run, and through the hub what joining it cost. Figures a run
// did not measure are NaN.
func curveLine(nodes int, online time.Duration, instances int, successS float64, rest restFigures, mem *peaks, lat *latencies, perChange float64, hub bool, joined joinFigures) string {
	p99 := math.NaN()
	if lat != nil {
		p99 = lat.worstP99ms()
	}
	hubRSS, hubCPU, joinS, joinsPerS, writesPerJoin := math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	viaHub := 0
	if hub {
		viaHub, hubRSS, hubCPU = 1, float64(rest.hubRSS)/(1<<20), rest.hubCPUPerNode
		joinS, joinsPerS, writesPerJoin = joined.took.Seconds(), float64(joined.joins)/joined.took.Seconds(), joined.writesPerJoin
	}
	return fmt.Sprintf("curve: nodes=%d online_s=%.1f instances=%d success_s=%.1f rest_writes_per_s=%.1f apiserver_rss_mib=%d apiserver_cpu_ms_per_node_s=%.4f manager_rss_mib=%d facade_p99_ms=%.1f apiserver_ms_per_change=%.2f"+
		" hub=%d rest_writes_per_node_min=%.3f apiserver_watches=%.0f hub_rss_mib=%.0f hub_cpu_ms_per_node_s=%.4f join_s=%.1f joins_per_s=%.1f writes_per_join=%.2f",
		nodes, online.Seconds(), instances, successS, rest.writesPerS, mem.peak("kube-apiserver")>>20, rest.apiserverCPUPerNode, mem.peak("manager")>>20, p99, perChange,
		viaHub, rest.writesPerS*60/float64(nodes), rest.watches, hubRSS, hubCPU, joinS, joinsPerS, writesPerJoin)
}

// agentQPS is the simulator's client rate for all its nodes together. Each
// real agent has its own (20/s by default); one process playing thousands
// shares one, and a fixed rate would time its own limit instead of the
// control plane: renewals alone take nodes/10 per second. One per node per
// second, 500 at least, leaves a node room for its registration's writes.
func agentQPS(nodes int) int { return max(500, nodes) }

func createServices(ctx context.Context, c client.Client, n, factor int) error {
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				err := c.Create(ctx, &edgev1alpha1.EdgeService{
					ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("svc-%05d", i)},
					Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: edgev1alpha1.FolderPath(fmt.Sprintf("/scale/group-%02d", i%20)), Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To(int32(factor))}},
				})
				if err != nil {
					failed.Store(&err)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if p := failed.Load(); p != nil {
		return *p
	}
	return nil
}

// serverWrites sums the API server's requests that write.
func serverWrites(ctx context.Context, cfg *rest.Config) (float64, error) {
	counts, err := testenv.APIRequests(ctx, cfg)
	return writes(counts), err
}

// writes sums the write requests of the API server's request counts.
func writes(counts map[string]float64) float64 {
	total := 0.0
	for key, n := range counts {
		if isWrite(key) {
			total += n
		}
	}
	return total
}

// writesBeyondLeases sums the writes of every resource but Leases.
func writesBeyondLeases(counts map[string]float64) float64 {
	total := 0.0
	for key, n := range counts {
		if _, res, _ := strings.Cut(key, " "); isWrite(key) && res != "leases" {
			total += n
		}
	}
	return total
}

func isWrite(key string) bool {
	switch verb, _, _ := strings.Cut(key, " "); verb {
	case "POST", "PUT", "PATCH", "APPLY", "DELETE":
		return true
	}
	return false
}

// reads lists the read requests between two counts, most first: a LIST
// that a component repeats costs the API server in proportion to the
// objects, so it is what makes a cost per write grow with the fleet.
func reads(before, after map[string]float64) string {
	var keys []string
	for key, n := range after {
		if !isWrite(key) && n > before[key] {
			keys = append(keys, key)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return after[keys[i]]-before[keys[i]] > after[keys[j]]-before[keys[j]] })
	var b strings.Builder
	for _, key := range keys {
		fmt.Fprintf(&b, "\n  %-40s %8.0f", key, after[key]-before[key])
	}
	return b.String()
}

// peaks samples the resident memory of processes every second.
type peaks struct {
	mu  sync.Mutex
	max map[string]int64
}

func (p *peaks) sample(ctx context.Context, pids map[string]int) {
	p.mu.Lock()
	p.max = map[string]int64{}
	p.mu.Unlock()
	for ctx.Err() == nil {
		for name, pid := range pids {
			if rss, err := procs.RSS(pid); err == nil {
				p.mu.Lock()
				p.max[name] = max(p.max[name], rss)
				p.mu.Unlock()
			}
		}
		time.Sleep(time.Second)
	}
}

func (p *peaks) peak(name string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max[name]
}

func (p *peaks) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.max))
	for n := range p.max {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d MiB", n, p.max[n]>>20))
	}
	return strings.Join(parts, ", ")
}

// latencies times facade requests made by 4 clients in a loop.
type latencies struct {
	mu      sync.Mutex
	byRoute map[string][]time.Duration
}

// replicaRoutes prefixes the routes of the read replica's facade.
const replicaRoutes = "read replica: "

// idleWindow is how long the run measures what the nodes cost at rest
// (--rest-window): six Lease renewals of every node in direct mode, six
// beats through the hub.
var idleWindow = 60 * time.Second

func (l *latencies) load(ctx context.Context, leader, replica, trivial, nodeID, serviceID string) {
	l.mu.Lock()
	l.byRoute = map[string][]time.Duration{}
	l.mu.Unlock()
	urls := map[string]string{trivialRoute: trivial + "/"}
	for prefix, base := range map[string]string{"": leader, replicaRoutes: replica} {
		if base == "" {
			continue
		}
		urls[prefix+"containers of a service"] = base + "/api/v1/container/service?serviceIds[]=" + serviceID + "&pageNum=1&pageSize=10"
		urls[prefix+"records of a service"] = base + "/api/v1/service/record?id=" + serviceID + "&pageNum=1&pageSize=10"
		urls[prefix+"nodes pageSize 10"] = base + "/api/v1/node?pageSize=10"
		urls[prefix+"nodes pageSize 100"] = base + "/api/v1/node?pageSize=100"
		urls[prefix+"containers of a node"] = base + "/api/v1/container/node?nodeIds[]=" + nodeID + "&pageNum=1&pageSize=10"
		urls[prefix+"containers of a node, by key"] = base + "/api/v1/container/node?nodeIds[]=" + nodeID + "&pageNum=1&pageSize=10&key=running"
	}
	var wg sync.WaitGroup
	for name, url := range urls {
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				resp, err := http.Get(url)
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				// The whole answer, read to its end so that the
				// connection is reused.
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				l.mu.Lock()
				l.byRoute[name] = append(l.byRoute[name], time.Since(start))
				l.mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
}

// worstP99ms is worstP99 of the leader's facade in milliseconds, NaN when
// the facade was not loaded.
func (l *latencies) worstP99ms() float64 {
	if w := l.worstP99(false); w > 0 {
		return w.Seconds() * 1000
	}
	return math.NaN()
}

// worstP99 is the highest p99 over the routes of the leader's facade, or
// of the read replica's.
func (l *latencies) worstP99(replica bool) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var worst time.Duration
	for name, d := range l.byRoute {
		if len(d) == 0 || name == trivialRoute || strings.HasPrefix(name, replicaRoutes) != replica {
			continue
		}
		sorted := slices.Clone(d)
		slices.Sort(sorted)
		worst = max(worst, sorted[len(sorted)*99/100])
	}
	return worst
}

func (l *latencies) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.byRoute))
	for n := range l.byRoute {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		d := l.byRoute[n]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		if len(d) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  %-32s p50 %8v  p99 %8v  (%d requests)", n, d[len(d)/2].Round(10*time.Microsecond), d[len(d)*99/100].Round(10*time.Microsecond), len(d))
	}
	return b.String()
}

// machineCPU is the machine's busy CPU time; 0 where it cannot be read.
func machineCPU() time.Duration {
	d, _ := procs.MachineCPU()
	return d
}

// others is the CPU, in cores, that processes outside the run used over
// a window: the machine's busy time less the run's processes'. The
// machine is shared; a run's figures are read beside it.
func others(before, after map[string]time.Duration, machineBefore, machineAfter, window time.Duration) float64 {
	if machineBefore == 0 || machineAfter == 0 || window <= 0 {
		return math.NaN()
	}
	used := machineAfter - machineBefore
	for n, d := range after {
		used -= d - before[n]
	}
	return max(0, used.Seconds()/window.Seconds())
}
