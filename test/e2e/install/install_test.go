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

// Package install runs the install path of the docs as a reader runs it:
// every ```sh block of docs/install.md, of docs/agent.md's "Install on a
// device" and of docs/operating.md, in order, each with bash -euo
// pipefail, against a control plane on this machine (envtest's
// kube-apiserver and etcd, configured for API aggregation), with the
// release's artifacts cut into dist/release/VERSION by make release's
// script (hack/release.sh, a trial cut for this machine's platform), its
// image pushed to a registry on loopback, the chart installed
// and upgraded by the helm CLI, and a device joined through the hub.
//
// The reader's own values are this machine's: install.md's first block
// sets VERSION, REGISTRY, NS and HUB_URL, and the test gives them its own
// values there, as the page asks ("set them once, to your own"); a
// device's block may set ARCH, the upgrade's block VERSION, the same way.
// The line kubectl edge node add prints is the join line the device's
// block runs. Nothing else of a block is changed: a block that cannot run
// as written fails the test with its output.
//
// What envtest leaves out is played by the test (cluster_test.go): the
// kubelet runs each Deployment's replicas as processes of the manager's
// binary, as the Deployment's ServiceAccount with its arguments
// (addresses moved to free loopback ports), once its image can be pulled
// from the registry; the Deployment controller writes the status kubectl
// rollout status reads; Services answer on their ClusterIPs (a loopback
// range) and the hub's LoadBalancer on HUB_URL. The blocks run as root
// in a sandbox (sandbox_test.go): a mount namespace where /etc, /usr/local
// and /var/lib are overlays kept in the test's directory, and a PID
// namespace whose processes end with the test; systemctl is a shim that
// runs a unit's ExecStart. The device's agent runs the simulated runtime
// (EDGE_AGENT_ARGS="--runtime=sim" in /etc/edgeplane/edge-agent.env, the
// unit's EnvironmentFile): no engine holds the doc's image here.
//
// INSTALL_DOCS_DIR runs a draft of the three pages instead of docs/.
package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The reader's values on this machine, and the names the pages use.
const (
	version     = "v0.1.0"
	nextVersion = "v0.2.0"
	namespace   = "edgeplane-system"
	// releaseRegistry is the registry make release names the image for
	// unless told another (RELEASE_REGISTRY).
	releaseRegistry = "registry.example/edgeplane"
	// The device, the service and the Helm release of the pages.
	nodeName    = "edge-linux-01"
	serviceName = "hello"
	releaseName = "edgeplane"
	// blockTimeout bounds one block: two rollouts of 5 m at most each, on
	// a busy machine.
	blockTimeout = 12 * time.Minute
)

// TestInstallDocs runs the Helm route of install.md, with the device of
// agent.md and the day-to-day work of operating.md, on one control
// plane, and the bundle route on another.
func TestInstallDocs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the install suite runs as root, as CI does: its sandbox mounts overlays over /etc, /usr/local and /var/lib in a namespace of its own")
	}
	logf.SetLogger(logr.Discard()) // envtest's
	root := testenv.RepoRoot()
	docs := filepath.Join(root, "docs")
	if d := os.Getenv("INSTALL_DOCS_DIR"); d != "" {
		docs = d
	}
	read := func(page, section string) []block {
		md, err := os.ReadFile(filepath.Join(docs, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := shellBlocks(page, string(md), section)
		if err != nil {
			t.Fatal(err)
		}
		return blocks
	}
	install, device, operating := read("install.md", ""), read("agent.md", "## Install on a device"), read("operating.md", "")
	if len(install) == 0 || len(device) == 0 {
		t.Fatalf("install.md has %d sh blocks, agent.md's Install on a device %d", len(install), len(device))
	}

	tmp := t.TempDir()
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	bins := build(t, root, filepath.Join(tmp, "bin"), version)
	out, err := exec.Command("bash", filepath.Join(root, "hack", "apt-install.sh"), "skopeo=skopeo").CombinedOutput()
	if err != nil {
		t.Fatalf("hack/apt-install.sh skopeo: %v\n%s", err, out)
	}
	reg := startRegistry(t)
	dist := filepath.Join(tmp, "release")
	release(t, root, dist, version, releaseRegistry)
	release(t, root, dist, nextVersion, releaseRegistry)
	tools := filepath.Join(tmp, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"kubectl": filepath.Join(assets, "kubectl"), "helm": bins.helm} {
		if err := os.Symlink(target, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	s := suite{
		root: root, dist: dist, tools: tools, assets: assets, bins: bins, reg: reg,
		files: map[string]string{
			"/etc/containers/certs.d/" + reg.host + "/ca.crt": string(reg.caPEM),
			"/etc/edgeplane/edge-agent.env":                   "# The install suite's device runs no engine.\nEDGE_AGENT_ARGS=\"--runtime=sim\"\n",
			"/etc/hosts":                                      string(hosts),
		},
	}
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Hour)
	}
	// Time for the cleanups ahead of go test's -timeout, which runs none.
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-3*time.Minute))
	t.Cleanup(cancel)

	t.Run("helm", func(t *testing.T) { s.helmRoute(ctx, t, install, device, operating) })
	t.Run("bundle", func(t *testing.T) { s.bundleRoute(ctx, t, install) })
}

// suite is what the two routes share: the release, its registry, the tools.
type suite struct {
	root, dist, tools, assets string
	bins                      binaries
	reg                       *imageRegistry
	files                     map[string]string
}

// route is one control plane, its played cluster and its sandbox.
type route struct {
	t       *testing.T
	cfg     *rest.Config
	admin   client.Client
	cluster *cluster
	sb      *sandbox
	hubURL  string
	// dir is the reader's working directory, state the shell's
	// variables between blocks.
	dir, state string
	env        []string
	// joinLine is the last line kubectl edge node add printed.
	joinLine string
}

// start starts a control plane configured for aggregation with Services'
// ClusterIPs on loopback, the cluster played on it, and a sandbox.
func (s *suite) start(ctx context.Context, t *testing.T) *route {
	t.Helper()
	dir := t.TempDir()
	env := &envtest.Environment{BinaryAssetsDirectory: s.assets, Scheme: testenv.Scheme} // no CRDs: the chart or the bundle brings them
	if _, err := testenv.ConfigureAggregation(env, dir); err != nil {
		t.Fatal(err)
	}
	// kube-proxy's part: ClusterIPs are loopback addresses the test answers.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", fmt.Sprintf("127.%d.%d.0/24", 100+rand.IntN(100), rand.IntN(256)))
	cfg, err := testenv.StartEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		t.Fatal(err)
	}
	lb, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &route{t: t, cfg: cfg, admin: admin, hubURL: "https://" + lb.Addr().String(), dir: filepath.Join(dir, "work"), state: filepath.Join(dir, "shell")}
	for _, d := range []string{r.dir, r.state, filepath.Join(dir, "home"), filepath.Join(dir, "pods")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The reader's working directory: the release they cut, and what
	// they copy to the device (the agent for its platform, the unit).
	if err := os.Symlink(filepath.Join(s.dist, "dist"), filepath.Join(r.dir, "dist")); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(s.dist, "dist", "release", version, "edge-agent-linux-"+goruntime.GOARCH), filepath.Join(r.dir, "edge-agent-linux-"+goruntime.GOARCH), 0o755)
	copyFile(t, filepath.Join(s.dist, "dist", "release", version, "edge-agent.service"), filepath.Join(r.dir, "edge-agent.service"), 0o644)

	r.sb = startSandbox(t, filepath.Join(dir, "sandbox"), s.tools, nil, s.files)
	r.env = []string{"HOME=" + filepath.Join(dir, "home"), "KUBECONFIG=" + kubeconfig, "USER=root", "LANG=C.UTF-8"}
	r.cluster = &cluster{
		cfg: cfg, admin: admin, namespace: namespace, dir: filepath.Join(dir, "pods"),
		binaries: map[string]string{"/manager": s.bins.manager}, pullable: s.reg.pullable,
		loadBalancers: map[string]net.Listener{releaseName + "-hub": lb},
		hosts:         filepath.Join(dir, "sandbox", "overlay", "etc", "upper", "hosts"),
		log:           logr.Discard(), workloads: map[string]*workload{}, proxies: map[string]*testenv.Proxy{}, named: map[string]bool{},
	}
	if testing.Verbose() {
		r.cluster.log = testr.New(t)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.cluster.run(cctx); close(done) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("what the cluster did:\n%s\n\n%s\nthe device's agent (systemctl's edge-agent):\n%s", r.cluster.Events(), r.cluster.podLogs(), r.sb.unitLog("edge-agent"))
		}
	})
	return r
}

// run runs one block in the sandbox, in the reader's working directory
// and with the variables earlier blocks exported, and returns its output.
func (r *route) run(ctx context.Context, b block, script string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, blockTimeout)
	defer cancel()
	// As one shell that the reader pastes every block into: the
	// variables a block sets (exported, so that they are kept: set -a)
	// and its working directory are the next block's.
	prologue := fmt.Sprintf(`set -a
if [[ -f %[1]s/vars ]]; then . %[1]s/vars; fi
if [[ -f %[1]s/cwd ]]; then cd "$(cat %[1]s/cwd)"; fi
trap 'if [[ $? == 0 ]]; then export -p >%[1]s/vars; pwd >%[1]s/cwd; fi' EXIT
`, r.state)
	cmd := r.sb.command(ctx, r.dir, r.env, "bash", "-euo", "pipefail", "-c", prologue+script)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r.t.Logf("%s ran in %s", b.where, time.Since(start).Round(time.Second))
	if ctx.Err() != nil {
		err = fmt.Errorf("%w: not done within %s", err, blockTimeout)
	}
	return string(out), err
}

// mustRun runs a block and fails the test, stopping it, if the block fails.
func (r *route) mustRun(ctx context.Context, b block, script string) string {
	out, err := r.run(ctx, b, script)
	if err != nil {
		r.t.Fatalf("%s: %v\n--- block, as run\n%s--- output\n%s", b.where, err, script, out)
	}
	return out
}

// helmRoute: install.md from its first block to its last, the device's
// blocks of agent.md where install.md sends the reader to them (after
// kubectl edge node add), the bundle's block left for bundleRoute; then
// operating.md.
func (s *suite) helmRoute(ctx context.Context, t *testing.T, install, device, operating []block) {
	r := s.start(ctx, t)
	chain := true // until the service runs, each block needs the one before
	runBlock := func(b block, script string) {
		if chain {
			r.mustRun(ctx, b, script)
			return
		}
		if out, err := r.run(ctx, b, script); err != nil {
			t.Errorf("%s: %v\n--- block, as run\n%s--- output\n%s", b.where, err, script, out)
		}
	}
	for i, b := range install {
		script := b.script
		switch {
		case i == 0:
			var missing []string
			if script, missing = setOwn(script, map[string]string{"VERSION": version, "REGISTRY": s.reg.host + "/edgeplane", "NS": namespace, "HUB_URL": r.hubURL}); len(missing) > 0 {
				t.Fatalf("%s sets no %v: the blocks after it read them", b.where, missing)
			}
		case isBundle(script):
			t.Logf("%s: the bundle's route, run on a control plane of its own (bundle)", b.where)
			continue
		case strings.Contains(script, "helm upgrade"):
			var missing []string
			if script, missing = setOwn(script, map[string]string{"VERSION": nextVersion}); len(missing) > 0 {
				t.Errorf("%s upgrades without setting VERSION to the release it upgrades to (export VERSION=...): it would upgrade to the release installed", b.where)
			}
		}
		// A device's architecture is this machine's.
		script, _ = setOwn(script, map[string]string{"ARCH": goruntime.GOARCH})
		if strings.Contains(script, "helm upgrade") {
			before := r.cluster.pods()
			runBlock(b, script)
			r.checkHistory(ctx, s.bins.helm, 2)
			r.checkUpgraded(ctx, before)
			r.checkFleet(ctx, b.where)
			continue
		}
		out, err := r.run(ctx, b, script)
		if err != nil {
			if chain {
				t.Fatalf("%s: %v\n--- block, as run\n%s--- output\n%s", b.where, err, script, out)
			}
			t.Errorf("%s: %v\n--- block, as run\n%s--- output\n%s", b.where, err, script, out)
		}
		if strings.Contains(script, "helm install") {
			// helm install on the first try: one revision, deployed.
			r.checkHistory(ctx, s.bins.helm, 1)
		}
		if line := printedJoin(out); line != "" {
			r.joinLine = line
			// Where install.md sends the reader to agent.md: on the device.
			joined := false
			for _, d := range device {
				script, joins := withPrintedJoin(d.script, r.joinLine)
				script, _ = setOwn(script, map[string]string{"ARCH": goruntime.GOARCH})
				if joins {
					joined = true
					t.Logf("%s: the join line is the one kubectl edge node add printed: %s", d.where, r.joinLine)
				}
				runBlock(d, script)
			}
			if !joined {
				t.Fatal("no block of agent.md's Install on a device runs edge-agent join")
			}
		}
		if strings.Contains(script, "kind: EdgeService") && chain {
			r.checkFleet(ctx, b.where)
			chain = false
		}
	}
	if r.joinLine == "" {
		t.Fatal("no block of install.md printed the line that joins a device (kubectl edge node add)")
	}
	if chain {
		t.Fatal("no block of install.md deploys an EdgeService (kind: EdgeService)")
	}
	for _, b := range operating {
		runBlock(b, b.script)
	}
	r.checkFleet(ctx, "the end")
}

// bundleRoute: install.md's blocks up to the Helm install (the release,
// the facade's certificate), then the bundle's block, on a control plane
// of its own; the bundle's manager and hub then run, the hub published
// at HUB_URL.
func (s *suite) bundleRoute(ctx context.Context, t *testing.T, install []block) {
	r := s.start(ctx, t)
	ran := false
	for i, b := range install {
		script := b.script
		if i == 0 {
			script, _ = setOwn(script, map[string]string{"VERSION": version, "REGISTRY": s.reg.host + "/edgeplane", "NS": namespace, "HUB_URL": r.hubURL})
		}
		if strings.Contains(script, "helm install") || strings.Contains(script, "helm upgrade") {
			continue
		}
		if isBundle(script) {
			r.mustRun(ctx, b, script)
			ran = true
			break
		}
		r.mustRun(ctx, b, script)
	}
	if !ran {
		t.Fatal("install.md has no block that applies the bundle (install.yaml)")
	}
	for _, name := range []string{releaseName + "-manager", releaseName + "-hub"} {
		r.waitFor(ctx, "Deployment "+name+" available", 5*time.Minute, func() (bool, string) {
			d := &appsv1.Deployment{}
			if err := r.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
				return false, err.Error()
			}
			return d.Status.AvailableReplicas == *d.Spec.Replicas && d.Status.ObservedGeneration == d.Generation, fmt.Sprintf("status %+v", d.Status)
		})
	}
	r.waitFor(ctx, "the hub published at HUB_URL", time.Minute, func() (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := r.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: hubapi.InfoConfigMap}, cm); err != nil {
			return false, err.Error()
		}
		return cm.Data[hubapi.InfoServer] == r.hubURL, "published " + cm.Data[hubapi.InfoServer]
	})
	svc := &corev1.Service{}
	if err := r.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: releaseName + "-hub"}, svc); err != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("Service %s-hub: %v, type %s; want a LoadBalancer", releaseName, err, svc.Spec.Type)
	}
}

// isBundle says whether a block applies the release bundle.
func isBundle(script string) bool { return strings.Contains(script, "install.yaml") }

// checkHistory holds the release to its revisions: n of them, the last
// deployed.
func (r *route) checkHistory(ctx context.Context, helm string, n int) {
	r.t.Helper()
	cmd := exec.CommandContext(ctx, helm, "history", releaseName, "-n", namespace, "-o", "json")
	cmd.Env = append(os.Environ(), r.env...)
	out, err := cmd.Output()
	var history []struct {
		Revision int    `json:"revision"`
		Status   string `json:"status"`
	}
	if err == nil {
		err = json.Unmarshal(out, &history)
	}
	if err != nil || len(history) != n || history[n-1].Status != "deployed" {
		r.t.Fatalf("helm history %s: %s (%v); want %d revisions, the last deployed", releaseName, out, err, n)
	}
}

// checkUpgraded holds helm upgrade to a new revision whose pods replaced
// the ones before.
func (r *route) checkUpgraded(ctx context.Context, before map[string][]*pod) {
	r.waitFor(ctx, "the upgrade's pods", 5*time.Minute, func() (bool, string) {
		now := r.cluster.pods()
		for name, pods := range before {
			if len(now[name]) == 0 || len(pods) == 0 || now[name][0] == pods[0] {
				return false, fmt.Sprintf("Deployment %s still runs its pods of before", name)
			}
		}
		return true, ""
	})
}

// checkFleet is what the reader sees once the service is deployed: the
// node online, the service Ready, and the facade, through kube-apiserver,
// listing the node online.
func (r *route) checkFleet(ctx context.Context, after string) {
	r.t.Helper()
	r.waitFor(ctx, "node "+nodeName+" online, after "+after, 3*time.Minute, func() (bool, string) {
		n := &edgev1alpha1.EdgeNode{}
		if err := r.admin.Get(ctx, client.ObjectKey{Name: nodeName}, n); err != nil {
			return false, err.Error()
		}
		return n.Status.Status == edgev1alpha1.NodeOnline, fmt.Sprintf("status %q", n.Status.Status)
	})
	r.waitFor(ctx, "EdgeService "+serviceName+" Ready, after "+after, 3*time.Minute, func() (bool, string) {
		es := &edgev1alpha1.EdgeService{}
		if err := r.admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: serviceName}, es); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(es.Status.Conditions, "Ready")
		return c != nil && c.Status == "True", fmt.Sprintf("conditions %+v", es.Status.Conditions)
	})
	kube, err := rest.HTTPClientFor(r.cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.waitFor(ctx, "the facade listing node "+nodeName+" online through kube-apiserver, after "+after, 2*time.Minute, func() (bool, string) {
		resp, err := kube.Get(strings.TrimSuffix(r.cfg.Host, "/") + apiserver.AggregatedPrefix + "/api/v1/node?pageSize=-1")
		if err != nil {
			return false, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		var env struct {
			Data struct {
				List []struct {
					Name   string `json:"name"`
					Status string `json:"status"`
				} `json:"list"`
			} `json:"data"`
		}
		body := new(strings.Builder)
		if err := json.NewDecoder(io.TeeReader(resp.Body, body)).Decode(&env); err != nil {
			return false, resp.Status + " " + body.String()
		}
		for _, n := range env.Data.List {
			if n.Name == nodeName && n.Status == "online" {
				return true, ""
			}
		}
		return false, resp.Status + " " + body.String()
	})
}

// waitFor polls done every second until it says yes, for at most limit,
// and fails the test with what it last saw.
func (r *route) waitFor(ctx context.Context, what string, limit time.Duration, done func() (bool, string)) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	last := ""
	for {
		ok, seen := done()
		if ok {
			return
		}
		last = seen
		select {
		case <-ctx.Done():
			r.t.Fatalf("%s: not within %s; last seen: %s", what, limit, last)
		case <-time.After(time.Second):
		}
	}
}
