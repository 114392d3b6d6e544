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
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestReleaseBundle applies the release bundle (hack/build-installer.sh, as
// make build-installer runs it) to a bare API server for real, by
// server-side apply, then runs the manager as the ServiceAccount the bundle
// creates, with the arguments of the bundle's Deployment: a node comes
// online, a service deploys and is recorded, and a facade client with the
// bundle's viewer role and a token of the facade's audience reads it over
// TLS. Then the edge hub runs the same way, as its own ServiceAccount with
// its own Deployment's arguments: a device joins and its node comes online
// through the hub alone. So the bundle's RBAC and flags are enough; and
// the API server confirms that the hub's are no more than it needs.
func TestReleaseBundle(t *testing.T) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	ctx := context.Background()
	dir, err := testenv.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	env := &envtest.Environment{BinaryAssetsDirectory: dir, Scheme: testenv.Scheme} // no CRDs: the bundle brings them
	_, err = testenv.ConfigureAggregation(env, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := testenv.StartEnv(env)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	tmp := t.TempDir()
	bundle := filepath.Join(tmp, "install.yaml")
	out, err := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "hack", "build-installer.sh"), "registry.example/edgeplane/manager:v9.9.9", bundle).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	objs := decodeAll(t, bundle)
	checkBundle(t, objs)
	deployments := map[string]*appsv1.Deployment{}
	for _, u := range objs {
		g.Expect(admin.Patch(ctx, u, client.Apply, client.FieldOwner("bundle-test"), client.ForceOwnership)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		if u.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d)).To(Succeed())
			deployments[d.Name] = d
		}
	}
	deployment, hubDeployment := deployments["edgeplane-manager"], deployments["edgeplane-hub"]
	g.Expect(deployment).NotTo(BeNil())
	g.Expect(hubDeployment).NotTo(BeNil())
	g.Eventually(func() error { return admin.List(ctx, &edgev1alpha1.EdgeNodeList{}) }).Should(Succeed(), "the bundle's CRDs are served")

	// The manager's identity is the bundle's ServiceAccount, nothing more.
	token, err := testenv.ServiceAccountToken(ctx, cfg, "edgeplane-system", deployment.Spec.Template.Spec.ServiceAccountName)
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := writeTokenKubeconfig(t, cfg.Host, cfg.CAData, token)
	certFile, keyFile := filepath.Join(tmp, "tls.crt"), filepath.Join(tmp, "tls.key")
	// The name the aggregation layer asks for, as a real certificate of
	// the bundle's Secret must carry.
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, []string{aggregatedService + ".edgeplane-system.svc"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(certFile, certPEM, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(keyFile, keyPEM, 0o600)).To(Succeed())
	facade := freeAddr(t)
	// As in a pod of the bundle's namespace, where the manager finds it itself.
	args := []string{"--kubeconfig", kubeconfig, "--leader-election-namespace", deployment.Namespace}
	for _, a := range deployment.Spec.Template.Spec.Containers[0].Args {
		switch {
		case strings.HasPrefix(a, "--api-bind-address="):
			a = "--api-bind-address=" + facade
		case strings.HasPrefix(a, "--metrics-bind-address="), strings.HasPrefix(a, "--health-probe-bind-address="):
			a = a[:strings.Index(a, "=")+1] + freeAddr(t)
		case strings.HasPrefix(a, "--tls-cert-file="):
			a = "--tls-cert-file=" + certFile
		case strings.HasPrefix(a, "--tls-private-key-file="):
			a = "--tls-private-key-file=" + keyFile
		}
		args = append(args, a)
	}
	// No kube-proxy here: the aggregated Service becomes an ExternalName to
	// localhost and the APIService names the facade's port. The APIService
	// is the bundle's otherwise, caBundle left to the manager.
	g.Expect(admin.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "edgeplane-system", Name: aggregatedService}})).To(Succeed())
	g.Expect(admin.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "edgeplane-system", Name: aggregatedService},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}})).To(Succeed())
	_, port, _ := net.SplitHostPort(facade)
	as := &unstructured.Unstructured{}
	as.SetGroupVersionKind(testenv.APIServiceGVK)
	as.SetName(apiserver.AggregatedAPIService)
	g.Expect(admin.Patch(ctx, as, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"service":{"port":`+port+`}}}`)))).To(Succeed())
	// A process of its own, as in the pod: one manager per process.
	bin := filepath.Join(tmp, "manager")
	out, err = exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	manager, err := procs.Start(ctx, tmp, "manager", bin, args...)
	g.Expect(err).NotTo(HaveOccurred())
	defer procs.Stop(manager)
	defer func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(tmp, "manager.log"))
			t.Logf("manager log:\n%s", log)
		}
	}()

	// An agent (played by the test) reports a node; the manager, with the
	// bundle's RBAC, brings it online and deploys a service on it.
	const node = "bundle-node"
	g.Expect(admin.Create(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.9:7200"}})).To(Succeed())
	info := edgev1alpha1.NodeInfo{Type: "linux", Arch: "amd64"}
	g.Eventually(func() error { return testenv.RenewLease(ctx, admin, "edgeplane-node-lease", node) }).Should(Succeed(), "the bundle creates the Lease namespace")
	g.Expect(testenv.Report(ctx, admin, node, info, nil)).To(Succeed())
	g.Eventually(func() edgev1alpha1.NodeState {
		n := &edgev1alpha1.EdgeNode{}
		_ = admin.Get(ctx, client.ObjectKey{Name: node}, n)
		return n.Status.Status
	}).Should(Equal(edgev1alpha1.NodeOnline))

	svc := &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bundled"},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "bundled@1#linux"}}, Nodes: []string{node}},
	}
	g.Expect(admin.Create(ctx, svc)).To(Succeed())
	var insts []edgev1alpha1.ServiceInstance
	g.Eventually(func() []edgev1alpha1.ServiceInstance {
		insts, _ = testenv.Instances(ctx, admin, svc.Namespace, svc.Name)
		return insts
	}).Should(HaveLen(1))
	inst := insts[0]
	g.Expect(testenv.Report(ctx, admin, node, info, nil, edgev1alpha1.ObservedContainer{
		Name: inst.Name, TaskID: inst.TaskID, Revision: inst.Revision, State: edgev1alpha1.ContainerRunning, Image: "bundled@1#linux",
	})).To(Succeed())
	g.Eventually(func() edgev1alpha1.DeployStatus {
		insts, _ = testenv.Instances(ctx, admin, svc.Namespace, svc.Name)
		if len(insts) != 1 {
			return ""
		}
		return insts[0].DeployStatus
	}).Should(Equal(edgev1alpha1.DeploySuccess))
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "bundled-1"}, &edgev1alpha1.DeployRecord{})).To(Succeed())

	// A legacy client with the bundle's viewer role and a token minted for
	// the facade's audience reads the node list over TLS.
	viewer, err := testenv.ServiceAccountToken(ctx, cfg, "default", "console")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "console"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edgeplane-facade-viewer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "console"}},
	})).To(Succeed())
	audienced, err := testenv.ServiceAccountToken(ctx, cfg, "default", "console", "edgeplane-facade")
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int { code, _ := fetchAs("https://"+facade+"/readyz", ""); return code }).Should(Equal(http.StatusOK))
	code, body := fetchAs("https://"+facade+"/api/v1/node", audienced)
	g.Expect(code).To(Equal(http.StatusOK), body)
	g.Expect(body).To(ContainSubstring(`"name":"bundle-node"`))
	code, _ = fetchAs("https://"+facade+"/api/v1/node", viewer)
	g.Expect(code).To(Equal(http.StatusUnauthorized), "an API server token is not a facade token")

	// Through kube-apiserver the API server's own token is the way in:
	// the manager has set the APIService's caBundle, reads the front-proxy
	// settings and reviews the forwarded user, all with the bundle's RBAC.
	g.Eventually(func() string {
		status, _, _ := testenv.APIServiceAvailable(ctx, admin, apiserver.AggregatedAPIService)
		return status
	}, time.Minute).Should(Equal("True"))
	kube, err := rest.HTTPClientFor(&rest.Config{Host: cfg.Host, BearerToken: viewer, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() string {
		resp, err := kube.Get(strings.TrimSuffix(cfg.Host, "/") + apiserver.AggregatedPrefix + "/api/v1/node")
		if err != nil {
			return err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		data, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(data)
	}).Should(And(HavePrefix("200"), ContainSubstring(`"name":"bundle-node"`)))

	// The hub, a process of its own as the bundle's hub ServiceAccount with
	// its Deployment's arguments: it serves, a device joins with a token
	// as kubectl edge node add makes one, and the device's Lease and report
	// reach the manager through the hub alone.
	hubSA := hubDeployment.Spec.Template.Spec.ServiceAccountName
	checkHubAccess(t, ctx, admin, hubDeployment.Namespace, hubSA)
	hubToken, err := testenv.ServiceAccountToken(ctx, cfg, hubDeployment.Namespace, hubSA)
	g.Expect(err).NotTo(HaveOccurred())
	hubAddr, hubProbes, hubMetrics := freeAddr(t), freeAddr(t), freeAddr(t)
	hubURL := "https://" + hubAddr
	hubEnv := podEnv(hubDeployment)
	g.Expect(hubEnv).To(HaveKeyWithValue("HUB_ADVERTISE_URL", ContainSubstring(".invalid")), "the bundle's advertised URL is a placeholder")
	hubEnv["HUB_ADVERTISE_URL"] = hubURL // as set for the cluster's devices
	hubArgs := []string{"--kubeconfig", writeTokenKubeconfig(t, cfg.Host, cfg.CAData, hubToken)}
	for _, a := range hubDeployment.Spec.Template.Spec.Containers[0].Args {
		a = expandEnv(a, hubEnv)
		switch {
		case strings.HasPrefix(a, "--hub-bind-address="):
			a = "--hub-bind-address=" + hubAddr
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + hubProbes
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + hubMetrics
		}
		hubArgs = append(hubArgs, a)
	}
	g.Expect(hubArgs).To(ContainElement("--hub-namespace=edgeplane-system"), "the namespace comes from the downward API")
	hub, err := procs.Start(ctx, tmp, "hub", bin, hubArgs...)
	g.Expect(err).NotTo(HaveOccurred())
	defer procs.Stop(hub)
	defer func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(tmp, "hub.log"))
			t.Logf("hub log:\n%s", log)
		}
	}()
	g.Eventually(func() int { code, _ := fetch("http://" + hubProbes + "/readyz"); return code }).Should(Equal(http.StatusOK), "the hub is ready with the bundle's RBAC")
	published := &corev1.ConfigMap{}
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "edgeplane-system", Name: hubapi.InfoConfigMap}, published)).To(Succeed())
	g.Expect(published.Data).To(HaveKeyWithValue(hubapi.InfoServer, hubURL))
	block, _ := pem.Decode([]byte(published.Data[hubapi.InfoCACert]))
	g.Expect(block).NotTo(BeNil())
	hubCA, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())

	// The replica's own Lease, which keeps its nodes' Leases alive.
	g.Eventually(func() (int, error) {
		list := &coordinationv1.LeaseList{}
		err := admin.List(ctx, list, client.InNamespace("edgeplane-node-lease"), client.HasLabels{hubapi.LabelHubReplica})
		return len(list.Items), err
	}).Should(Equal(1))

	const device = "hub-node"
	g.Expect(admin.Create(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: device}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.10:7200"}})).To(Succeed())
	joinToken, err := hubapi.NewToken()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Create(ctx, hubapi.JoinSecret(joinToken, "edgeplane-system", device, time.Now().Add(time.Hour)))).To(Succeed())
	id, err := hubconn.Join(ctx, hubconn.JoinOptions{Hub: hubURL, Token: joinToken.String(), CAHash: hubapi.CAHash(hubCA), Node: device, Dir: filepath.Join(tmp, "device")})
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := id.RESTConfig()
	g.Expect(err).NotTo(HaveOccurred())
	// The hub serves no discovery: the kinds are mapped here, as the agent maps them.
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(edgev1alpha1.GroupVersion.WithKind("NodeAssignment"), meta.RESTScopeRoot)
	mapper.Add(edgev1alpha1.GroupVersion.WithKind("EdgeNode"), meta.RESTScopeRoot)
	mapper.Add(coordinationv1.SchemeGroupVersion.WithKind("Lease"), meta.RESTScopeNamespace)
	viaHub, err := client.New(rc, client.Options{Scheme: testenv.Scheme, Mapper: mapper})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error { return testenv.RenewLease(ctx, viaHub, id.LeaseNamespace, device) }).Should(Succeed())
	g.Eventually(func() error { return testenv.Report(ctx, viaHub, device, info, nil) }).Should(Succeed())
	g.Eventually(func() edgev1alpha1.NodeState {
		n := &edgev1alpha1.EdgeNode{}
		_ = admin.Get(ctx, client.ObjectKey{Name: device}, n)
		return n.Status.Status
	}).Should(Equal(edgev1alpha1.NodeOnline))

	// The hub's metrics, behind the same filter as the manager's: a
	// caller with edgeplane-metrics-reader reads them, the viewer may not.
	scraper, err := testenv.ServiceAccountToken(ctx, cfg, "default", "prometheus")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edgeplane-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "prometheus"}},
	})).To(Succeed())
	g.Eventually(func() int { code, _ := fetchAs("https://"+hubMetrics+"/metrics", scraper); return code }).Should(Equal(http.StatusOK))
	code, _ = fetchAs("https://"+hubMetrics+"/metrics", viewer)
	g.Expect(code).To(Equal(http.StatusForbidden))
}

// checkBundle holds the bundle's workloads to the manager's standard and
// its roles to what controller-gen generates: every Deployment runs as
// non-root with a read-only root, no privilege escalation and no
// capabilities, has probes, resources, a PodDisruptionBudget and a
// NetworkPolicy; every generated role is in the bundle as generated; no
// role of the bundle grants a wildcard verb.
func checkBundle(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	selects := func(sel map[string]any, labels map[string]string) bool {
		if len(sel) == 0 {
			return false
		}
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
			t.Fatal(err)
		}
		pod := d.Spec.Template.Spec
		if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("Deployment %s: the pod must run as non-root with the RuntimeDefault seccomp profile", d.Name)
		}
		if pod.ServiceAccountName == "" {
			t.Errorf("Deployment %s: no ServiceAccount of its own", d.Name)
		}
		for _, c := range pod.Containers {
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 {
				t.Errorf("Deployment %s container %s: want no privilege escalation, a read-only root and every capability dropped", d.Name, c.Name)
			}
			if c.LivenessProbe == nil || c.ReadinessProbe == nil {
				t.Errorf("Deployment %s container %s: no liveness or readiness probe", d.Name, c.Name)
			}
			if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("Deployment %s container %s: no memory request or limit", d.Name, c.Name)
			}
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 || len(pod.TopologySpreadConstraints) == 0 {
			t.Errorf("Deployment %s: want two replicas or more, spread over nodes", d.Name)
		}
		var pdb, netpol bool
		for _, o := range objs {
			if o.GetNamespace() != d.Namespace {
				continue
			}
			switch o.GetKind() {
			case "PodDisruptionBudget":
				sel, _, _ := unstructured.NestedMap(o.Object, "spec", "selector", "matchLabels")
				pdb = pdb || selects(sel, d.Spec.Template.Labels)
			case "NetworkPolicy":
				sel, _, _ := unstructured.NestedMap(o.Object, "spec", "podSelector", "matchLabels")
				netpol = netpol || selects(sel, d.Spec.Template.Labels)
			}
		}
		if !pdb || !netpol {
			t.Errorf("Deployment %s: PodDisruptionBudget %t, NetworkPolicy %t; want both", d.Name, pdb, netpol)
		}
	}

	roles := map[string][]any{}
	for _, u := range objs {
		if u.GetKind() != "ClusterRole" && u.GetKind() != "Role" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
		roles[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = rules
		for _, r := range rules {
			verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
			if slices.Contains(verbs, "*") {
				t.Errorf("%s %s grants every verb", u.GetKind(), u.GetName())
			}
		}
	}
	root := testenv.RepoRoot()
	for _, file := range []string{"config/rbac/role.yaml", "config/namespaced-rbac/role_lease.yaml", "config/namespaced-rbac/role_facade.yaml", "config/namespaced-rbac/role_system.yaml",
		"config/hub/role.yaml", "config/hub/role_lease.yaml", "config/hub/role_system.yaml"} {
		for _, want := range decodeAll(t, filepath.Join(root, file)) {
			key := want.GetKind() + " " + want.GetNamespace() + "/edgeplane-" + want.GetName()
			got, ok := roles[key]
			if wantRules, _, _ := unstructured.NestedSlice(want.Object, "rules"); !ok || !reflect.DeepEqual(got, wantRules) {
				t.Errorf("the bundle's %s is not %s as generated (make manifests)", key, file)
			}
		}
	}
}

// checkHubAccess asks the API server what the hub's ServiceAccount may do
// with every binding of the bundle in place: what the hub needs, and none
// of the manager's access to services, records, templates and Secrets.
func checkHubAccess(t *testing.T, ctx context.Context, admin client.Client, namespace, sa string) {
	t.Helper()
	may := func(a authorizationv1.ResourceAttributes) bool {
		r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + namespace + ":" + sa,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: &a,
		}}
		if err := admin.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	edge := func(verb, resource, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: edgev1alpha1.GroupVersion.Group, Resource: resource, Namespace: ns}
	}
	secrets := func(verb, ns string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Resource: "secrets", Namespace: ns}
	}
	for _, a := range []authorizationv1.ResourceAttributes{
		edge("watch", "edgenodes", ""), edge("watch", "nodeassignments", ""),
		{Verb: "patch", Group: edgev1alpha1.GroupVersion.Group, Resource: "edgenodes", Subresource: "status"},
		secrets("watch", "edgeplane-node-lease"), secrets("create", namespace), secrets("delete", namespace),
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "edgeplane-node-lease"},
		{Verb: "update", Resource: "configmaps", Namespace: namespace},
		{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"},
		{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
	} {
		if !may(a) {
			t.Errorf("the hub may not %s %s/%s in %q", a.Verb, a.Resource, a.Subresource, a.Namespace)
		}
	}
	for _, a := range []authorizationv1.ResourceAttributes{
		edge("get", "edgeservices", "default"), edge("list", "edgeservices", ""), edge("list", "deployrecords", ""),
		edge("list", "provisiontemplates", ""), edge("create", "edgenodes", ""), edge("patch", "edgenodes", ""), edge("update", "nodeassignments", ""),
		secrets("get", ""), secrets("list", ""), secrets("get", "default"), secrets("get", "kube-system"), secrets("create", "edgeplane-node-lease"),
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: namespace},
		{Verb: "patch", Group: "apiregistration.k8s.io", Resource: "apiservices"},
	} {
		if may(a) {
			t.Errorf("the hub may %s %s/%s in %q", a.Verb, a.Resource, a.Subresource, a.Namespace)
		}
	}
}

// podEnv is a Deployment's first container's environment as its pods see
// it: values, and the namespace from the downward API.
func podEnv(d *appsv1.Deployment) map[string]string {
	env := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = d.Namespace
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		}
	}
	return env
}

// expandEnv replaces $(NAME) with the variable's value, as the kubelet
// expands a container's arguments.
func expandEnv(s string, env map[string]string) string {
	for name, v := range env {
		s = strings.ReplaceAll(s, "$("+name+")", v)
	}
	return s
}

// aggregatedService is the bundle's Service behind the APIService.
const aggregatedService = "edgeplane-aggregated-api"

// decodeAll reads every object of a multi-document YAML file.
func decodeAll(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := testenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeTokenKubeconfig writes a kubeconfig that authenticates with token.
func writeTokenKubeconfig(t *testing.T, host string, ca []byte, token string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: ca}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
