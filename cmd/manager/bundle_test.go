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
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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
	"github.com/edgeplane/edgeplane/test/framework/procs"
	"github.com/edgeplane/edgeplane/test/framework/testenv"
)

// TestReleaseBundle applies the release bundle (hack/build-installer.sh, as
// make build-installer runs it) to a bare API server for real, by
// server-side apply, then runs the manager as the ServiceAccount the bundle
// creates, with the arguments of the bundle's Deployment: a node comes
// online, a service deploys and is recorded, and a facade client with the
// bundle's viewer role and a token of the facade's audience reads it over
// TLS. So the bundle's RBAC and flags are enough.
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
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	tmp := t.TempDir()
	bundle := filepath.Join(tmp, "install.yaml")
	out, err := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "hack", "build-installer.sh"), "registry.example/edgeplane/manager:v9.9.9", bundle).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	objs := decodeAll(t, bundle)
	var deployment *appsv1.Deployment
	for _, u := range objs {
		g.Expect(admin.Patch(ctx, u, client.Apply, client.FieldOwner("bundle-test"), client.ForceOwnership)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		if u.GetKind() == "Deployment" {
			deployment = &appsv1.Deployment{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, deployment)).To(Succeed())
		}
	}
	g.Expect(deployment).NotTo(BeNil())
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
