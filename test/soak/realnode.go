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

package soak

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	mobyclient "github.com/moby/moby/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/enginecheck"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
	"github.com/edgeplane/edgeplane/test/framework/testregistry"
)

// The real-engine node: one edge-agent on a private engine, joined
// through the hubs as the simulated nodes are, named as a simulator
// names its nodes.
const (
	realNodeName = "real-linux-01"
	// realRegistrySecret holds the credentials of the registry the real
	// node pulls from.
	realRegistrySecret = "soak-registry"
	// realSeries is the series of the engine's containers.
	realSeries = "engine (real node) containers"
	// realSettle is how long the engine may take, once every service
	// settled, to hold exactly the containers the node is assigned.
	realSettle = time.Minute
)

func realServiceName(i int) string { return fmt.Sprintf("real-%02d", i) }

// EngineKind is the kind of engine a run starts for its real node from
// the --engine flag, and why it starts none: --engine none, or
// EDGEPLANE_SKIP_ENGINE=1 (skipped); an error for a kind it cannot run.
func EngineKind(flag string, skipped bool) (kind, why string, err error) {
	switch {
	case flag == "none":
		return "", "--engine none", nil
	case flag != "podman" && flag != "docker":
		return "", "", fmt.Errorf("--engine %q: want podman, docker or none", flag)
	case skipped:
		return "", testenv.SkipEngineVar + "=1", nil
	}
	return flag, "", nil
}

// EngineWhy says in one line why hack/engine.sh could not start an
// engine: the error's first line, then the script's last line of its own
// ("engine: ..."), else the last line of what it wrote.
func EngineWhy(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "no reason given"
	}
	why := lines[0]
	if len(lines) == 1 {
		return why
	}
	last := lines[len(lines)-1]
	for _, l := range lines[1:] {
		if m, ok := strings.CutPrefix(l, "engine: "); ok {
			last = m
		}
	}
	return why + ": " + last
}

// startRealNode starts the real engine, a registry on loopback holding
// the node's image, joins the node through the hubs, creates its
// services and starts its agent. An engine that cannot be started leaves
// the run without a real node, and says why in one line.
func (r *run) startRealNode(ctx context.Context) error {
	kind, why, err := EngineKind(r.cfg.Engine, testenv.EngineSkipped())
	if err != nil {
		return err
	}
	if why != "" {
		r.logf("no real-engine node: %s", why)
		return nil
	}
	engine, err := testenv.StartEngine(kind)
	if err != nil {
		log := filepath.Join(r.logs, "engine-start.log")
		_ = os.WriteFile(log, []byte(err.Error()+"\n"), 0o644)
		r.logf("no real-engine node: the %s engine could not be started: %s (all of it in %s)", kind, EngineWhy(err), log)
		return nil
	}
	r.onStop(func() {
		if err := engine.Stop(); err != nil {
			r.logf("stopping the real node's engine: %v", err)
		}
	})
	if r.eng, err = mobyclient.New(mobyclient.WithHost(engine.Host)); err != nil {
		return err
	}
	r.onStop(func() { _ = r.eng.Close() })

	// The image, from a registry on loopback, as edge chaos serves it:
	// Debian's static busybox, made into an image here, no download.
	reg, err := testregistry.Start(map[string]string{"soak": "soak"}, r.tmp)
	if err != nil {
		return err
	}
	r.onStop(func() { _ = reg.Close() })
	if err := reg.PushBox("edgeplane/box", "1", "soak", "soak"); err != nil {
		return err
	}
	auths := fmt.Sprintf(`{"auths":{%q:{"username":"soak","password":"soak"}}}`, reg.Host)
	if err := r.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: realRegistrySecret},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(auths)}}); err != nil {
		return err
	}

	// The node holds its static services and nothing more: no dynamic
	// service, long-lived or short-lived, is placed on it.
	node := hubs.Node(realNodeName, nil)
	node.Spec.MaxInstances = ptr.To(int32(r.cfg.RealServices))
	state := filepath.Join(r.tmp, "real")
	if err := r.hubs.Join(ctx, node, r.hubs.URL, state); err != nil {
		return err
	}
	// Before any dynamic service exists, so that the node is full when
	// they are placed.
	for i := range r.cfg.RealServices {
		if err := r.c.Create(ctx, realService(i, reg.Host)); err != nil {
			return err
		}
	}
	if r.realPprof, err = testenv.FreeAddr(); err != nil {
		return err
	}
	// As a device runs it, with the defaults, and Go's profiles for its
	// goroutines.
	if r.realAgent, err = procs.Start(ctx, r.logs, "agent-real", filepath.Join(r.cfg.Bin, "edge-agent"), "--runtime", "docker",
		"--runtime-endpoint", engine.Host, "--state-dir", state, "--pprof-bind-address", r.realPprof); err != nil {
		return err
	}
	r.onStop(func() { procs.Stop(r.realAgent) })
	r.res.RealNode = true
	r.logf("real-engine node %s on %s, joined through the hub, with %d services", realNodeName, kind, r.cfg.RealServices)
	return nil
}

// realService is the i-th service of the real node: static on it, its
// image from the registry at host. Every change pulls (pullPolicy
// Always): the engine holds the image's one layer after the first, so a
// pull is its manifest.
func realService(i int, host string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: realServiceName(i)},
		Spec: edgev1alpha1.EdgeServiceSpec{
			DeploySpec: edgev1alpha1.DeploySpec{Path: "/soak",
				Image: edgev1alpha1.ImageSpec{Ref: "box@1#linux", Path: host + "/edgeplane/box", PullPolicy: edgev1alpha1.PullAlways,
					PullSecretRefs: []edgev1alpha1.LocalSecretReference{{Name: realRegistrySecret}}},
				Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"CHANGE=0"}, Network: "none"}},
				Policy: edgev1alpha1.PolicyStatic},
			Nodes:                []string{realNodeName},
			RevisionHistoryLimit: ptr.To(int32(5)),
		},
	}
}

// RealChange is the k-th change of the real node's services: which
// service, and when after the churn began. Each service changes every
// `every`, the services in turn, evenly apart.
func RealChange(k, services int, every time.Duration) (service int, at time.Duration) {
	return k % services, every * time.Duration(k+1) / time.Duration(services)
}

// realChurn changes the real node's services' environment, as kubectl
// edit does, until ctx ends: each one a replacement of its container by
// the engine.
func (r *run) realChurn(ctx context.Context) {
	if r.realAgent == nil || r.cfg.RealServices == 0 || r.cfg.RealChangeEvery <= 0 {
		return
	}
	for k := 0; ; k++ {
		s, at := RealChange(k, r.cfg.RealServices, r.cfg.RealChangeEvery)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(r.began.Add(at))):
		}
		name := realServiceName(s)
		if err := r.edit(ctx, name, func(spec *edgev1alpha1.EdgeServiceSpec) { setChange(spec, k+1) }); err != nil {
			if ctx.Err() == nil {
				r.churnErr("env of "+name, err)
			}
			continue
		}
		r.count(func(res *Result) { res.Changes++; res.RealChanges++ })
	}
}

// engineContainers counts the containers the real engine holds; NaN
// when it does not answer.
func (r *run) engineContainers(ctx context.Context) float64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := enginecheck.Count(ctx, r.eng)
	if err != nil {
		return math.NaN()
	}
	return float64(n)
}

// checkEngine checks, once every service settled, that the engine holds
// exactly one container per instance of the real node's services, at its
// revision, running their current configuration, and nothing else of the
// node's; it says each mismatch and counts them. The engine may take a
// moment to remove what it replaced: realSettle.
func (r *run) checkEngine(ctx context.Context) int {
	var rep enginecheck.Report
	var last error
	wait, cancel := context.WithTimeout(ctx, realSettle)
	defer cancel()
	err := procs.WaitFor(wait, "the real engine to hold its node's instances", 2*time.Second, func() (bool, error) {
		rep, last = r.engineReport(ctx)
		return last == nil && rep.Mismatches() == 0, nil
	})
	if err == nil {
		return 0
	}
	if last != nil {
		r.logf("real node: the engine could not be checked: %v", last)
		return 1
	}
	for _, n := range rep.Notes {
		r.logf("real node: %s", n)
	}
	return rep.Mismatches()
}

// engineReport checks the engine against the node's assignment.
func (r *run) engineReport(ctx context.Context) (enginecheck.Report, error) {
	services := &edgev1alpha1.EdgeServiceList{}
	if err := r.c.List(ctx, services, client.InNamespace(namespace)); err != nil {
		return enginecheck.Report{}, err
	}
	placed := &edgev1alpha1.NodeAssignment{}
	if err := r.c.Get(ctx, client.ObjectKey{Name: realNodeName}, placed); client.IgnoreNotFound(err) != nil {
		return enginecheck.Report{}, err
	}
	want := enginecheck.Wanted(placed, services.Items, func(s *edgev1alpha1.EdgeService) string { return ChangeMark(&s.Spec) })
	return enginecheck.Check(ctx, r.eng, realNodeName, want)
}

// ChangeMark is the environment entry that marks a spec's configuration,
// CHANGE=<n> (setChange), as its containers must hold it.
func ChangeMark(spec *edgev1alpha1.EdgeServiceSpec) string {
	if spec.Config == nil || spec.Config.Linux == nil {
		return ""
	}
	for _, e := range spec.Config.Linux.Env {
		if strings.HasPrefix(e, "CHANGE=") {
			return e
		}
	}
	return ""
}
