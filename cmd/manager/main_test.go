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
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func fetch(url string) (int, string) { return fetchAs(url, "") }

// fetchAs gets url with a bearer token (none when empty), trusting any
// certificate: these tests are about who may read, not about whose
// certificate it is.
func fetchAs(url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	resp, err := insecure.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// start runs the manager binary's run function with args until the
// returned function is called.
func start(t *testing.T, args ...string) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args)
		if ctx.Err() == nil {
			t.Errorf("the manager stopped by itself: %v", err)
		}
		done <- err
	}()
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("the manager did not stop")
			return nil
		}
	}
}

// TestManager runs the manager as its flags configure it against a real
// API server: probes, metrics, the facade, and the facade alone as a read
// replica.
func TestManager(t *testing.T) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	env, _, c, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()
	user, err := env.AddUser(envtest.User{Name: "manager", Groups: []string{"system:masters"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := user.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kc, kubeconfig, 0o600)).To(Succeed())
	ctx := context.Background()
	for _, ns := range []string{"edgeplane-node-lease", "legacy"} {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	t.Run("prints its version", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(run(ctx, []string{"--version"})).To(Succeed(), "and starts nothing")
	})

	t.Run("refuses bad flags", func(t *testing.T) {
		g := NewWithT(t)
		for _, args := range [][]string{
			{"--kubeconfig", kc, "--auth", "bogus", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"},
			{"--kubeconfig", kc, "--tls-cert-file", "cert.pem"},
			// Bearer tokens never travel in clear text unless asked for by name.
			{"--kubeconfig", kc, "--auth", "kubernetes", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"},
			{"--kubeconfig", kc, "--time-zone", "Mars/Olympus_Mons"},
			{"--kubeconfig", kc, "--controllers=false", "--api-bind-address", "0"},
			// CORS origins are origins: no wildcard, no path.
			{"--kubeconfig", kc, "--cors-allowed-origins", "*", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"},
			{"--kubeconfig", kc, "--cors-allowed-origins", "https://console.example.com/app", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"},
			// A renew deadline at or past the lease duration cannot hold the lease.
			{"--kubeconfig", kc, "--leader-elect", "--leader-elect-lease-duration", "5s", "--leader-elect-renew-deadline", "5s", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"},
			{"--no-such-flag"},
		} {
			g.Expect(run(ctx, args)).NotTo(Succeed(), "%v", args)
		}
	})

	metrics, probes, facade := freeAddr(t), freeAddr(t), freeAddr(t)
	stop := start(t, "--kubeconfig", kc, "--metrics-bind-address", metrics, "--health-probe-bind-address", probes,
		"--api-bind-address", facade, "--api-namespace", "legacy", "--time-zone", "Asia/Shanghai", "--leader-elect=false")

	g.Eventually(func() int { code, _ := fetch("http://" + probes + "/healthz"); return code }).Should(Equal(http.StatusOK))
	g.Eventually(func() int { code, _ := fetch("http://" + probes + "/readyz"); return code }).Should(Equal(http.StatusOK))
	// A ready replica serves the facade at once: a Service sends it
	// requests from its first ready probe on.
	first, answer := fetch("http://" + facade + "/api/v1/node")
	g.Expect(first).To(Equal(http.StatusOK), "the facade of a ready replica answers: %s", answer)
	_, verbose := fetch("http://" + probes + "/readyz?verbose")
	g.Expect(verbose).To(ContainSubstring("[+]facade ok"))

	node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "mgr-node"}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:7200"}}
	g.Expect(c.Create(ctx, node)).To(Succeed())
	g.Eventually(func() edgev1alpha1.NodeState {
		_ = c.Get(ctx, client.ObjectKeyFromObject(node), node)
		return node.Status.Status
	}).Should(Equal(edgev1alpha1.NodeOffline), "the reconcilers run: no Lease means offline")

	var page struct {
		Data struct {
			List []map[string]any `json:"list"`
		} `json:"data"`
	}
	_, body := fetch("http://" + facade + "/api/v1/node")
	g.Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
	g.Expect(page.Data.List).To(HaveLen(1))
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	g.Expect(page.Data.List[0]["createdTime"]).To(Equal(node.CreationTimestamp.In(shanghai).Format(time.DateTime)), "--time-zone applies")

	// Metrics are served over HTTPS to those who may get /metrics.
	metricsURL := "https://" + metrics + "/metrics"
	code, _ := fetchAs(metricsURL, "")
	g.Expect(code).To(Equal(http.StatusUnauthorized), "no token")
	stranger, err := testenv.ServiceAccountToken(ctx, env.Config, "legacy", "stranger")
	g.Expect(err).NotTo(HaveOccurred())
	code, _ = fetchAs(metricsURL, stranger)
	g.Expect(code).To(Equal(http.StatusForbidden), "a token without the metrics reader role")
	// Granted before its first request: the filter caches a denial for 30 s.
	token, err := testenv.ServiceAccountToken(ctx, env.Config, "legacy", "prometheus")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "legacy", Name: "prometheus"}},
	})).To(Succeed())
	// The API server's RBAC cache takes the binding a moment later; a
	// request before that would be denied and the denial cached for 30 s.
	g.Eventually(func() bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  "system:serviceaccount:legacy:prometheus",
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		}}
		return c.Create(ctx, sar) == nil && sar.Status.Allowed
	}).Should(BeTrue())
	var m string
	g.Eventually(func() int { code, m = fetchAs(metricsURL, token); return code }).Should(Equal(http.StatusOK))
	g.Expect(m).To(ContainSubstring(`controller_runtime_reconcile_total{controller="edgenode",result="success"}`))
	g.Expect(m).To(ContainSubstring(`edgeplane_api_requests_total{code="200",method="GET",route="listNodes"}`))
	g.Expect(m).To(MatchRegexp(`edgeplane_build_info\{goversion="go[^"]+",version="[^"]+"\} 1`))
	g.Expect(stop()).To(Succeed())

	t.Run("serves the facade alone as a read replica", func(t *testing.T) {
		g := NewWithT(t)
		facade := freeAddr(t)
		stop := start(t, "--kubeconfig", kc, "--controllers=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
			"--api-bind-address", facade, "--api-namespace", "legacy")
		defer func() { g.Expect(stop()).To(Succeed()) }()
		g.Eventually(func() int { code, _ := fetch("http://" + facade + "/readyz"); return code }, "30s").Should(Equal(http.StatusOK))
		replicaNode := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "replica-node"}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.2:7200"}}
		g.Expect(c.Create(ctx, replicaNode)).To(Succeed())
		g.Eventually(func() string { _, b := fetch("http://" + facade + "/api/v1/node?name=replica"); return b }, "10s").Should(ContainSubstring(`"name":"replica-node"`))
		g.Consistently(func() edgev1alpha1.NodeState {
			_ = c.Get(ctx, client.ObjectKeyFromObject(replicaNode), replicaNode)
			return replicaNode.Status.Status
		}, "1s").Should(BeEmpty(), "a read replica runs no reconciler")
		g.Expect(strings.Count(mustBody(g, "http://"+facade+"/api/v1/node"), `"id"`)).To(Equal(2))
	})

	// The cache of a manager that may not read the kinds never syncs; its
	// facade still answers discovery, so the aggregation layer never waits
	// on a sync, and its routes answer 503.
	t.Run("answers discovery before its cache has synced", func(t *testing.T) {
		g := NewWithT(t)
		token, err := testenv.ServiceAccountToken(ctx, env.Config, "legacy", "no-rights")
		g.Expect(err).NotTo(HaveOccurred())
		kc := writeTokenKubeconfig(t, env.Config.Host, env.Config.CAData, token)
		facade := freeAddr(t)
		stop := start(t, "--kubeconfig", kc, "--controllers=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
			"--api-bind-address", facade, "--api-namespace", "legacy")
		defer func() { g.Expect(stop()).To(Succeed()) }()
		g.Eventually(func() int { code, _ := fetch("http://" + facade + apiserver.AggregatedPrefix); return code }).Should(Equal(http.StatusOK))
		g.Expect(mustBody(g, "http://"+facade+apiserver.AggregatedPrefix)).To(ContainSubstring(`"kind":"APIResourceList"`))
		for _, path := range []string{"/readyz", "/api/v1/node", apiserver.AggregatedPrefix + "/api/v1/node"} {
			code, body := fetch("http://" + facade + path)
			g.Expect(code).To(Equal(http.StatusServiceUnavailable), "%s: %s", path, body)
		}
	})
}

func mustBody(g Gomega, url string) string {
	code, body := fetch(url)
	g.Expect(code).To(Equal(http.StatusOK))
	return body
}
