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

package install

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// cluster plays the parts of a cluster that envtest leaves out, for the
// Deployments and Services of one namespace: the kubelet (a Deployment's
// pods run as processes of the manager's binary, as the Deployment's
// ServiceAccount, with its arguments, its environment and its Secret
// volumes; readiness from its readiness probe), the Deployment controller
// (status, as kubectl rollout status reads it), the endpoints controller
// (EndpointSlices, as the aggregator's availability check reads them),
// kube-proxy (each Service's ClusterIP, a loopback address here, answered
// on its ports and forwarded to its ready pods) and a load-balancer
// provider (a LoadBalancer Service given an address the test chose). Pods
// listen on free loopback ports instead of their container ports, which
// processes sharing one network cannot all have.
type cluster struct {
	cfg       *rest.Config
	admin     client.Client
	namespace string
	dir       string
	// binaries maps an image's entrypoint (/manager) to the binary that
	// plays it.
	binaries map[string]string
	// pullable says whether an image can be pulled, as the kubelet finds.
	pullable func(ctx context.Context, image string) error
	// loadBalancers are the listeners of the LoadBalancer Services, by name.
	loadBalancers map[string]net.Listener
	// hosts is the sandbox's /etc/hosts, where Services' names go, as
	// cluster DNS would answer them.
	hosts string
	log   logr.Logger

	mu        sync.Mutex
	workloads map[string]*workload
	proxies   map[string]*testenv.Proxy
	named     map[string]bool

	evMu   sync.Mutex
	events []string
}

// workload is a Deployment's pods at one template.
type workload struct {
	hash   string
	labels map[string]string
	// ports maps a container port's name to its number.
	ports map[string]int32
	pods  []*pod
	// waiting says why no pods run: the image cannot be pulled, a Secret
	// is missing.
	waiting string
}

// pod is one replica, a process.
type pod struct {
	name string
	cmd  *exec.Cmd
	// addrs maps a container port to the loopback address it listens on.
	addrs map[int32]string
	// probe is the readiness probe's URL.
	probe string
	ready bool
}

// noTarget refuses connections: a Service without ready pods.
const noTarget = "127.0.0.1:1"

// run plays the cluster until ctx ends, then stops every pod.
func (c *cluster) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		c.sync(ctx)
		select {
		case <-ctx.Done():
			c.stopAll()
			return
		case <-tick.C:
		}
	}
}

func (c *cluster) sync(ctx context.Context) {
	deployments := &appsv1.DeploymentList{}
	if err := c.admin.List(ctx, deployments, client.InNamespace(c.namespace)); err != nil {
		return
	}
	seen := map[string]bool{}
	for i := range deployments.Items {
		d := &deployments.Items[i]
		seen[d.Name] = true
		c.syncDeployment(ctx, d)
	}
	c.mu.Lock()
	for name, w := range c.workloads {
		if !seen[name] {
			c.eventf("deployment %s deleted: stopping its pods", name)
			stopPods(w.pods)
			delete(c.workloads, name)
		}
	}
	c.mu.Unlock()
	services := &corev1.ServiceList{}
	if err := c.admin.List(ctx, services, client.InNamespace(c.namespace)); err == nil {
		for i := range services.Items {
			c.syncService(ctx, &services.Items[i])
		}
	}
}

// syncDeployment starts the Deployment's pods when its template is new
// (stopping the old ones: a rollout all at once), probes them, and
// writes its status.
func (c *cluster) syncDeployment(ctx context.Context, d *appsv1.Deployment) {
	tmpl, _ := json.Marshal(d.Spec.Template)
	sum := sha256.Sum256(tmpl)
	hash := hex.EncodeToString(sum[:])[:10]
	replicas := int(ptr.Deref(d.Spec.Replicas, 1))
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.workloads[d.Name]
	if w == nil || w.hash != hash || len(w.pods) != replicas {
		if w != nil && w.hash != hash {
			c.eventf("deployment %s: new template %s, stopping %d pods of %s", d.Name, hash, len(w.pods), w.hash)
			stopPods(w.pods)
			w = nil
		}
		if w == nil {
			w = &workload{hash: hash, labels: d.Spec.Template.Labels, ports: map[string]int32{}}
			for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
				w.ports[p.Name] = p.ContainerPort
			}
		}
		waited := w.waiting
		w.waiting = ""
		for len(w.pods) > replicas {
			stopPods(w.pods[len(w.pods)-1:])
			w.pods = w.pods[:len(w.pods)-1]
		}
		for i := len(w.pods); i < replicas; i++ {
			p, err := c.startPod(ctx, d, hash, i)
			if err != nil {
				if waited != err.Error() {
					c.eventf("deployment %s: pod %d waits: %v", d.Name, i, err)
				}
				w.waiting = err.Error()
				break
			}
			c.eventf("deployment %s: started pod %s (pid %d)", d.Name, p.name, p.cmd.Process.Pid)
			w.pods = append(w.pods, p)
		}
		c.workloads[d.Name] = w
	}
	ready := 0
	for _, p := range w.pods {
		r := p.probe == "" || probe(ctx, p.probe)
		if r != p.ready {
			c.eventf("pod %s ready: %t", p.name, r)
		}
		p.ready = r
		if r {
			ready++
		}
	}
	n := int32(len(w.pods))
	status := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
		ReadyReplicas: int32(ready), AvailableReplicas: int32(ready), UnavailableReplicas: int32(replicas - ready),
	}
	available, progressing := corev1.ConditionFalse, "ReplicaSetUpdated"
	if ready == replicas {
		available, progressing = corev1.ConditionTrue, "NewReplicaSetAvailable"
	}
	status.Conditions = []appsv1.DeploymentCondition{
		condition(d, appsv1.DeploymentAvailable, available, "MinimumReplicasAvailable"),
		condition(d, appsv1.DeploymentProgressing, corev1.ConditionTrue, progressing),
	}
	if !reflect.DeepEqual(status, d.Status) {
		d.Status = status
		_ = c.admin.Status().Update(ctx, d)
	}
}

// condition is a Deployment condition, its times kept while its status is.
func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	for _, c := range d.Status.Conditions {
		if c.Type == t && c.Status == s && c.Reason == reason {
			return c
		}
	}
	now := metav1.Now()
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, LastUpdateTime: now, LastTransitionTime: now}
}

// startPod runs replica i of d as the kubelet would run its pod.
func (c *cluster) startPod(ctx context.Context, d *appsv1.Deployment, hash string, i int) (*pod, error) {
	spec := d.Spec.Template.Spec
	ctr := spec.Containers[0]
	if err := c.pullable(ctx, ctr.Image); err != nil {
		return nil, fmt.Errorf("ErrImagePull %s: %w", ctr.Image, err)
	}
	if len(ctr.Command) == 0 || c.binaries[ctr.Command[0]] == "" {
		return nil, fmt.Errorf("container %s runs %q: not an entrypoint of the manager's image", ctr.Name, ctr.Command)
	}
	p := &pod{name: fmt.Sprintf("%s-%s-%d", d.Name, hash, i), addrs: map[int32]string{}}
	dir := filepath.Join(c.dir, p.name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// The Secret volumes, their keys as files.
	mounts := map[string]string{}
	for _, v := range spec.Volumes {
		if v.Secret == nil {
			continue
		}
		secret := &corev1.Secret{}
		if err := c.admin.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: v.Secret.SecretName}, secret); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		vdir := filepath.Join(dir, "volumes", v.Name)
		if err := os.MkdirAll(vdir, 0o700); err != nil {
			return nil, err
		}
		for k, data := range secret.Data {
			if err := os.WriteFile(filepath.Join(vdir, k), data, 0o600); err != nil {
				return nil, err
			}
		}
		for _, m := range ctr.VolumeMounts {
			if m.Name == v.Name {
				mounts[strings.TrimSuffix(m.MountPath, "/")] = vdir
			}
		}
	}
	// Its identity: a token of the Deployment's ServiceAccount, by
	// TokenRequest, as the kubelet projects one.
	sa := spec.ServiceAccountName
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(d.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token of ServiceAccount %s: %w", sa, err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.cfg, tr.Status.Token); err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = d.Namespace
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = p.name
		}
	}
	args := []string{"--kubeconfig=" + kubeconfig}
	for _, a := range append(slices.Clone(ctr.Args), "") {
		if a == "" {
			continue
		}
		for name, v := range env {
			a = strings.ReplaceAll(a, "$("+name+")", v)
		}
		flagName, value, hasValue := strings.Cut(a, "=")
		switch {
		case hasValue && strings.HasSuffix(flagName, "-bind-address") && value != "0":
			_, port, err := net.SplitHostPort(value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a, err)
			}
			addr, err := testenv.FreeAddr()
			if err != nil {
				return nil, err
			}
			n, _ := strconv.Atoi(port)
			p.addrs[int32(n)] = addr
			a = flagName + "=" + addr
		case hasValue:
			for mountPath, vdir := range mounts {
				if strings.HasPrefix(value, mountPath+"/") {
					a = flagName + "=" + vdir + strings.TrimPrefix(value, mountPath)
				}
			}
		}
		args = append(args, a)
		// In a pod the manager finds its namespace itself.
		if a == "--leader-elect" || a == "--leader-elect=true" {
			args = append(args, "--leader-election-namespace="+d.Namespace)
		}
	}
	if rp := ctr.ReadinessProbe; rp != nil && rp.HTTPGet != nil {
		port := rp.HTTPGet.Port.IntVal
		if rp.HTTPGet.Port.Type == intstr.String {
			port = portNumber(ctr, rp.HTTPGet.Port.StrVal)
		}
		addr, ok := p.addrs[port]
		if !ok {
			return nil, fmt.Errorf("the readiness probe's port %s is no address the container binds", rp.HTTPGet.Port.String())
		}
		p.probe = strings.ToLower(string(rp.HTTPGet.Scheme)) + "://" + addr + rp.HTTPGet.Path
		if rp.HTTPGet.Scheme == "" {
			p.probe = "http://" + addr + rp.HTTPGet.Path
		}
	}
	log, err := os.Create(filepath.Join(c.dir, p.name+".log"))
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(c.binaries[ctr.Command[0]], args...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	fmt.Fprintf(log, "pod %s: %s %s\n", p.name, c.binaries[ctr.Command[0]], strings.Join(args, " "))
	if err := p.cmd.Start(); err != nil {
		_ = log.Close()
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); _ = log.Close() }()
	return p, nil
}

// portNumber is the number of a container's named port.
func portNumber(ctr corev1.Container, name string) int32 {
	for _, p := range ctr.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// syncService answers the Service's ClusterIP on its ports, forwarding to
// its pods, gives a LoadBalancer Service its address, and writes the
// Service's EndpointSlice.
func (c *cluster) syncService(ctx context.Context, svc *corev1.Service) {
	if len(svc.Spec.Selector) == 0 {
		return
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	type backend struct {
		pod  *pod
		port int32
	}
	c.mu.Lock()
	ports := map[string][]backend{}
	for _, w := range c.workloads {
		if !sel.Matches(labels.Set(w.labels)) {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			port := sp.TargetPort.IntVal
			if sp.TargetPort.Type == intstr.String {
				port = w.ports[sp.TargetPort.StrVal]
			}
			for _, p := range w.pods {
				if p.ready || svc.Spec.PublishNotReadyAddresses {
					ports[sp.Name] = append(ports[sp.Name], backend{p, port})
				}
			}
		}
	}
	c.mu.Unlock()

	for _, sp := range svc.Spec.Ports {
		var targets []string
		for _, b := range ports[sp.Name] {
			if addr, ok := b.pod.addrs[b.port]; ok {
				targets = append(targets, addr)
			}
		}
		if len(targets) == 0 {
			targets = []string{noTarget}
		}
		if ip := net.ParseIP(svc.Spec.ClusterIP); ip != nil && ip.IsLoopback() {
			c.forward(svc.Name+" "+sp.Name, nil, net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(sp.Port))), targets)
			if !c.named[svc.Name] {
				c.named[svc.Name] = true
				name := svc.Name + "." + svc.Namespace + ".svc"
				if f, err := os.OpenFile(c.hosts, os.O_APPEND|os.O_WRONLY, 0); err == nil {
					fmt.Fprintf(f, "%s %s %s.cluster.local\n", svc.Spec.ClusterIP, name, name)
					_ = f.Close()
				}
			}
		}
		if l := c.loadBalancers[svc.Name]; l != nil && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			c.forward(svc.Name+" load balancer", l, l.Addr().String(), targets)
			host, _, _ := net.SplitHostPort(l.Addr().String())
			if len(svc.Status.LoadBalancer.Ingress) == 0 {
				svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: host}}
				_ = c.admin.Status().Update(ctx, svc)
			}
		}
	}

	// The EndpointSlice: pods here have no address of their own, so each
	// is given one of the documentation range (RFC 5737), which nothing
	// dials: the aggregator dials the ClusterIP.
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name + "-install-suite", Labels: map[string]string{
			discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "install-suite.edgeplane.io",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	seen := map[*pod]bool{}
	for _, sp := range svc.Spec.Ports {
		for _, b := range ports[sp.Name] {
			if !seen[b.pod] {
				seen[b.pod] = true
				slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
					Addresses:  []string{fmt.Sprintf("192.0.2.%d", len(seen))},
					Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(b.pod.ready)},
				})
			}
		}
		if len(ports[sp.Name]) > 0 {
			slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(ports[sp.Name][0].port), Protocol: ptr.To(corev1.ProtocolTCP)})
		}
	}
	live := &discoveryv1.EndpointSlice{}
	switch err := c.admin.Get(ctx, client.ObjectKeyFromObject(slice), live); {
	case apierrors.IsNotFound(err):
		if err := c.admin.Create(ctx, slice); err != nil {
			c.eventf("endpointslice %s: %v", slice.Name, err)
		}
	case err == nil && (!reflect.DeepEqual(live.Endpoints, slice.Endpoints) || !reflect.DeepEqual(live.Ports, slice.Ports)):
		live.Endpoints, live.Ports = slice.Endpoints, slice.Ports
		if err := c.admin.Update(ctx, live); err != nil {
			c.eventf("endpointslice %s: %v", slice.Name, err)
		}
	}
}

// forward keeps a proxy on addr (on l, when given) to targets.
func (c *cluster) forward(key string, l net.Listener, addr string, targets []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.proxies[key]; p != nil {
		p.SetTargets(targets...)
		return
	}
	if l == nil {
		var err error
		if l, err = net.Listen("tcp", addr); err != nil {
			c.eventf("service %s: listening on %s: %v", key, addr, err)
			return
		}
	}
	c.proxies[key] = testenv.ServeBalancer(l, targets...)
	c.eventf("service %s: %s forwards to %v", key, addr, targets)
}

func (c *cluster) stopAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.workloads {
		stopPods(w.pods)
	}
	c.workloads = map[string]*workload{}
	for _, p := range c.proxies {
		p.Close()
	}
}

// eventf records what the cluster did, for a failure's message.
func (c *cluster) eventf(format string, args ...any) {
	line := time.Now().Format("15:04:05.000 ") + fmt.Sprintf(format, args...)
	c.evMu.Lock()
	c.events = append(c.events, line)
	c.evMu.Unlock()
	c.log.Info(line)
}

// Events is what the cluster did so far.
func (c *cluster) Events() string {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	return strings.Join(c.events, "\n")
}

// podLogs is the tail of every pod's log.
func (c *cluster) podLogs() string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
	for _, f := range logs {
		data, _ := os.ReadFile(f)
		lines := strings.Split(string(data), "\n")
		fmt.Fprintf(&b, "--- %s (last 40 lines)\n%s\n", filepath.Base(f), strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
	return b.String()
}

// pods lists the running pods by Deployment.
func (c *cluster) pods() map[string][]*pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]*pod{}
	for name, w := range c.workloads {
		out[name] = slices.Clone(w.pods)
	}
	return out
}

func stopPods(pods []*pod) {
	var cmds []*exec.Cmd
	for _, p := range pods {
		cmds = append(cmds, p.cmd)
	}
	stopProcs(cmds...)
}

// stopProcs interrupts the processes and kills those still running after
// a grace (a pod's terminationGracePeriodSeconds, as it were).
func stopProcs(cmds ...*exec.Cmd) {
	for _, c := range cmds {
		_ = c.Process.Signal(os.Interrupt)
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, c := range cmds {
		for !procs.Exited(c.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}

// probe says whether an HTTP(S) readiness probe succeeds, as the kubelet
// probes: any 2xx or 3xx, certificates not checked.
func probe(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}

var probeClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // as the kubelet probes

// writeKubeconfig writes a kubeconfig for cfg's API server that
// authenticates with token.
func writeKubeconfig(path string, cfg *rest.Config, token string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	return clientcmd.WriteToFile(*kc, path)
}
