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

package apiserver_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The same facade reached through kube-apiserver: an APIService routes
// /apis/facade.edge.edgeplane.io/v1/... to it, kube-apiserver
// authenticates the caller and forwards the identity with its front-proxy
// certificate. One table of requests runs against both base URLs.
var _ = Describe("The facade through kube-apiserver", Ordered, func() {
	apiService := apiserver.AggregatedVersion + "." + apiserver.AggregatedGroup

	BeforeAll(func() {
		Eventually(func() string {
			status, _, _ := testenv.APIServiceAvailable(ctx, k8sClient, apiService)
			return status
		}, time.Minute).Should(Equal("True"))
		// A replica's first second: the facade answers 503 until it has
		// read the front-proxy settings, then serves.
		Eventually(func() int { return do(http.MethodGet, aggURL+"/api/v1/node", "", nil, "").HTTP }).Should(Equal(http.StatusOK))
	})

	It("is Available, and discovery lists it without an error anywhere", func() {
		status, msg, err := testenv.APIServiceAvailable(ctx, k8sClient, apiService)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal("True"), msg)

		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		list, err := dc.ServerResourcesForGroupVersion(apiserver.AggregatedGroup + "/" + apiserver.AggregatedVersion)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, r := range list.APIResources {
			names = append(names, r.Name)
		}
		Expect(names).To(ContainElements("api", "api/node", "api/container", "api/service", "api/provision-template", "api/openapi.json"))
		_, _, err = dc.ServerGroupsAndResources()
		Expect(err).NotTo(HaveOccurred(), "no group of the cluster's discovery fails")

		// kube-apiserver's own aggregated discovery holds the group as
		// current, not stale.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, kubeURL+"/apis", nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		resp, err := kubeHTTP.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		var groups apidiscoveryv2.APIGroupDiscoveryList
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(body, &groups)).To(Succeed(), "%s %s %s: %s", req.URL, resp.Status, resp.Header, body)
		var ours *apidiscoveryv2.APIGroupDiscovery
		for i := range groups.Items {
			if groups.Items[i].Name == apiserver.AggregatedGroup {
				ours = &groups.Items[i]
			}
		}
		Expect(ours).NotTo(BeNil(), "kube-apiserver's aggregated discovery lists the group")
		Expect(ours.Versions).To(HaveLen(1))
		Expect(ours.Versions[0].Freshness).To(Equal(apidiscoveryv2.DiscoveryFreshnessCurrent))
	})

	It("works with kubectl api-resources and kubectl get --raw, as the docs show", func() {
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(testenv.WriteKubeconfig(testEnv, kubeconfig)).To(Succeed())
		dir, err := testenv.AssetsDir()
		Expect(err).NotTo(HaveOccurred())
		kubectl := func(args ...string) string {
			GinkgoHelper()
			out, err := exec.Command(filepath.Join(dir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "kubectl %v: %s", args, out)
			return string(out)
		}
		// api-resources prints only what has verbs, which "api" has not:
		// that it runs clean (no "unable to retrieve the complete list of
		// server APIs") is what an unavailable group would break.
		Expect(kubectl("api-resources")).NotTo(ContainSubstring("unable to retrieve"))
		Expect(strings.Fields(kubectl("api-versions"))).To(ContainElement(apiserver.AggregatedGroup + "/" + apiserver.AggregatedVersion))
		var env struct {
			Status int `json:"status"`
			Data   struct {
				Total int `json:"total"`
			} `json:"data"`
		}
		out := kubectl("get", "--raw", apiserver.AggregatedPrefix+"/api/v1/node?pageNum=1&pageSize=10")
		Expect(json.Unmarshal([]byte(out), &env)).To(Succeed(), out)
		Expect(env.Status).To(Equal(http.StatusOK))

		// kubectl proxy: a legacy client whose base URL may carry a path
		// uses the proxy's address plus the prefix. One that takes a host
		// only cannot: /api/v1 there is Kubernetes' own core API.
		proxy := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", kubeconfig, "proxy", "--port=0")
		stdout, err := proxy.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(proxy.Start()).To(Succeed())
		DeferCleanup(func() { _ = proxy.Process.Kill(); _ = proxy.Wait() })
		line := make([]byte, 256)
		n, err := stdout.Read(line) // Starting to serve on 127.0.0.1:<port>
		Expect(err).NotTo(HaveOccurred())
		addr := strings.TrimSpace(strings.TrimPrefix(string(line[:n]), "Starting to serve on "))
		r := get("http://" + addr + apiserver.AggregatedPrefix + "/api/v1/node?pageNum=1&pageSize=10")
		Expect(r.HTTP).To(Equal(http.StatusOK))
		resp, body := raw(http.MethodGet, "http://"+addr+"/api/v1/node", nil)
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
		Expect(string(body)).NotTo(ContainSubstring(`"fieldErrors"`), "Kubernetes' answer, not the facade's")
	})

	Context("with the same requests both ways", Ordered, func() {
		var node *edgev1alpha1.EdgeNode
		var svc *edgev1alpha1.EdgeService
		var record string
		BeforeAll(func() {
			node = createNode("agg-node", "linux", "amd64")
			svc = createStatic("agg-web", "/agg", "shop/web@1#linux", "agg-node")
			report(node, running(instancesOf(svc.Name)[0], 1, metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))))
			Eventually(func() int { return recordTotal(string(svc.UID)) }).Should(BeNumerically(">", 0))
			var pg struct {
				List []struct {
					ID string `json:"id"`
				} `json:"list"`
			}
			api("/api/v1/service/record" + query("id", string(svc.UID))).into(&pg)
			record = pg.List[0].ID
		})

		// Reads answer the same status and the same body (uptime aside,
		// which moves with the clock) directly and through kube-apiserver.
		// A list may change between the two calls while other nodes come
		// and go, so each pair is asked again until it agrees.
		It("answers every read as the direct facade does, and as openapi.json says", func() {
			task := instancesOf(svc.Name)[0].TaskID
			reads := []struct{ method, path string }{
				{http.MethodGet, "/api/v1/node" + query("name", "agg-", "pageNum", "1", "pageSize", "10")},
				{http.MethodGet, "/api/v1/node/" + query("name", "agg-node", "basicInfo", "true")},
				{http.MethodGet, "/api/v1/node?pageSize=0"},
				{http.MethodGet, "/api/v1/container/" + task},
				{http.MethodGet, "/api/v1/container/no-such-task"},
				{http.MethodGet, "/api/v1/container/service" + query("serviceIds[]", string(svc.UID), "pageNum", "1", "pageSize", "10")},
				{http.MethodGet, "/api/v1/container/node" + query("nodeIds[]", string(node.UID))},
				{http.MethodGet, "/api/v1/container/node"},
				{http.MethodGet, "/api/v1/service/record" + query("id", string(svc.UID), "pageNum", "1", "pageSize", "10")},
				{http.MethodGet, "/api/v1/service/record/" + record},
				{http.MethodGet, "/api/v1/service/record/nope"},
				{http.MethodGet, "/api/v1/nope"},
				{http.MethodPut, "/api/v1/node"},
				{http.MethodPost, "/api/v1/service/record"},
			}
			for _, rd := range reads {
				Eventually(func(g Gomega) {
					direct, through := do(rd.method, baseURL+rd.path, "", nil, ""), do(rd.method, aggURL+rd.path, "", nil, "")
					g.Expect(through.HTTP).To(Equal(direct.HTTP), "%s %s", rd.method, rd.path)
					g.Expect(withoutUptime(through.raw)).To(Equal(withoutUptime(direct.raw)), "%s %s", rd.method, rd.path)
				}).Should(Succeed())
			}
			// HEAD: the same status and headers, no body.
			for _, path := range []string{"/api/v1/node", "/api/v1/container/" + task, "/api/v1/container/nope"} {
				direct, _ := raw(http.MethodHead, baseURL+path, nil)
				through, body := raw(http.MethodHead, aggURL+path, nil)
				Expect(through.StatusCode).To(Equal(direct.StatusCode), "HEAD %s", path)
				Expect(through.Header.Get("Content-Type")).To(Equal("application/json"))
				Expect(body).To(BeEmpty())
			}
		})

		It("serves the OpenAPI document with the prefix as its server", func() {
			resp, body := raw(http.MethodGet, aggURL+apiserver.OpenAPIPath, nil)
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			doc, err := openapi3.NewLoader().LoadFromData(body)
			Expect(err).NotTo(HaveOccurred())
			Expect(doc.Validate(ctx)).To(Succeed())
			Expect(doc.Servers).To(HaveLen(1))
			Expect(doc.Servers[0].URL).To(Equal(apiserver.AggregatedPrefix))
			Expect(doc.Paths.Len()).To(Equal(openAPI.Paths.Len()))
		})

		// Writes: each way gets its own objects, the same requests
		// otherwise; both answer alike and change the cluster alike.
		It("serves the DELETE with its JSON body and both POSTs as the direct facade does", func() {
			type answer struct {
				status  int
				message string
				keys    []string
			}
			var directAnswers []answer
			for _, way := range []struct{ name, url string }{{"direct", baseURL}, {"aggregated", aggURL}} {
				By("the " + way.name + " way")
				doomed := createStatic("agg-del-"+way.name, "/agg-del-"+way.name+"/a", "app@1#linux", "agg-node")
				Eventually(func() any {
					return api("/api/v1/container/service" + query("serviceIds[]", string(doomed.UID))).object()["total"]
				}).Should(BeNumerically("==", 1), "the facade's cache has the service")
				send := func(method, path, body string) answer {
					GinkgoHelper()
					body = strings.ReplaceAll(body, "WAY", way.name)
					r := do(method, way.url+path, "application/json", []byte(body), "")
					a := answer{status: r.HTTP, message: strings.ReplaceAll(r.Message, way.name, "WAY")}
					if m, ok := r.raw.(map[string]any); ok {
						if d, ok := m["data"].([]any); ok && len(d) > 0 {
							for k := range d[0].(map[string]any) {
								a.keys = append(a.keys, k)
							}
						}
					}
					return a
				}
				answers := []answer{
					send(http.MethodDelete, "/api/v1/service/path", `{"path":"/agg-del-WAY"}`),
					send(http.MethodDelete, "/api/v1/service/path", `{"path":`),
					send(http.MethodPost, "/api/v1/provision-template/path-label/folder", `{"name":"agg-WAY","path":"/"}`),
					send(http.MethodPost, "/api/v1/provision-template/path-label/folder", `{"name":"bad/name","path":"/"}`),
					send(http.MethodPost, "/api/v1/provision-template/path-label/service/batch", `{"imageRefs":["agg@1#linux"],"path":"/agg-WAY"}`),
					send(http.MethodPost, "/api/v1/provision-template/path-label/service/batch", `{"imageRefs":["agg@1#linux"],"path":"/no-such-WAY"}`),
				}
				Eventually(serviceGone("agg-del-"+way.name)).Should(BeTrue(), "%+v", answers)
				Expect(entriesIn("/agg-" + way.name)).To(HaveLen(1))
				if way.name == "direct" {
					directAnswers = answers
					continue
				}
				Expect(len(answers)).To(Equal(len(directAnswers)))
				for i := range answers {
					Expect(answers[i].status).To(Equal(directAnswers[i].status), "request %d", i)
					Expect(answers[i].message).To(Equal(directAnswers[i].message), "request %d", i)
					Expect(answers[i].keys).To(ConsistOf(directAnswers[i].keys), "request %d", i)
				}
				Expect(answers[0].status).To(Equal(http.StatusOK))
				Expect(answers[1].status).To(Equal(http.StatusBadRequest))
				Expect(answers[2].status).To(Equal(http.StatusOK))
				Expect(answers[4].status).To(Equal(http.StatusOK))
			}
		})
	})

	// Two layers decide: kube-apiserver on resource api/<segment> of
	// facade.edge.edgeplane.io named v1, then the facade on the kind
	// behind the route. Identities kube-apiserver alone knows: a client
	// certificate user, a ServiceAccount token, a group.
	It("authorizes at both layers, for certificate users, ServiceAccount tokens and groups", func() {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "facade_roles.yaml"))
		Expect(err).NotTo(HaveOccurred())
		objs, err := testenv.DecodeYAML(data)
		Expect(err).NotTo(HaveOccurred())
		type identity struct {
			name  string
			http  *http.Client
			rules []rbacv1.PolicyRule
		}
		var ids []identity
		bind := func(role *rbacv1.ClusterRole, subject rbacv1.Subject) {
			GinkgoHelper()
			Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-" + strings.ToLower(subject.Kind)},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}, Subjects: []rbacv1.Subject{subject},
			})).To(Succeed())
		}
		certUser := func(name string, groups ...string) *http.Client {
			GinkgoHelper()
			u, err := testEnv.AddUser(envtest.User{Name: name, Groups: groups}, cfg)
			Expect(err).NotTo(HaveOccurred())
			hc, err := rest.HTTPClientFor(u.Config())
			Expect(err).NotTo(HaveOccurred())
			return hc
		}
		tokenUser := func(name string) *http.Client {
			GinkgoHelper()
			tok, err := testenv.ServiceAccountToken(ctx, cfg, facadeNamespace, name) // kube-apiserver's audience
			Expect(err).NotTo(HaveOccurred())
			c := rest.AnonymousClientConfig(cfg)
			c.BearerToken = tok
			hc, err := rest.HTTPClientFor(c)
			Expect(err).NotTo(HaveOccurred())
			return hc
		}
		roles := []*rbacv1.ClusterRole{
			// Each layer alone: kube-apiserver lets the first through to
			// the facade, which refuses it; the second never gets there.
			{ObjectMeta: metav1.ObjectMeta{Name: "outer-only"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{apiserver.AggregatedGroup},
				Resources: []string{"api/node", "api/service"}, ResourceNames: []string{apiserver.AggregatedName}, Verbs: []string{"get", "delete"}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "inner-only"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{edgev1alpha1.GroupVersion.Group},
				Resources: []string{"edgenodes", "edgeservices", "deployrecords"}, Verbs: []string{"get", "list"}}}},
		}
		for _, u := range objs {
			role := &rbacv1.ClusterRole{}
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role)).To(Succeed())
			roles = append(roles, role)
		}
		for _, role := range roles {
			role.Name = "agg-" + role.Name
			role.ResourceVersion = ""
			Expect(k8sClient.Create(ctx, role)).To(Succeed())
			user := role.Name + "-user"
			bind(role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
			bind(role, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: facadeNamespace, Name: role.Name})
			bind(role, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: role.Name + "-group"})
			ids = append(ids,
				identity{role.Name + " (certificate user)", certUser(user), role.Rules},
				identity{role.Name + " (ServiceAccount token)", tokenUser(role.Name), role.Rules},
				identity{role.Name + " (group)", certUser(role.Name+"-member", role.Name+"-group"), role.Rules})
		}
		ids = append(ids, identity{"a certificate user with no role", certUser("agg-stranger"), nil})

		byKube, byFacade, allowed := 0, 0, 0
		for _, rt := range apiserver.Routes() {
			for _, id := range ids {
				var body io.Reader
				if rt.Method != http.MethodGet {
					body = strings.NewReader(`{"path":"/agg-matrix-none","name":"m","imageRefs":["m@1#linux"]}`)
				}
				req, err := http.NewRequestWithContext(ctx, rt.Method, aggURL+matrixTarget(rt), body)
				Expect(err).NotTo(HaveOccurred())
				req.Header.Set("Content-Type", "application/json")
				resp, err := id.http.Do(req)
				Expect(err).NotTo(HaveOccurred())
				data, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				var probe struct {
					Kind   string `json:"kind"`
					Status any    `json:"status"`
				}
				Expect(json.Unmarshal(data, &probe)).To(Succeed(), "%s", data)
				outer, inner := grantsAggregated(id.rules, rt.Aggregated), grantsAll(id.rules, rt.Needs)
				what := fmt.Sprintf("%s %s as %s: %d %s", rt.Method, rt.Pattern, id.name, resp.StatusCode, data)
				switch {
				case !outer:
					Expect(resp.StatusCode).To(Equal(http.StatusForbidden), what)
					Expect(probe.Kind).To(Equal("Status"), "kube-apiserver refuses it: "+what)
					byKube++
				case !inner:
					Expect(resp.StatusCode).To(Equal(http.StatusForbidden), what)
					Expect(probe.Status).To(BeNumerically("==", http.StatusForbidden), "the facade refuses it, in its envelope: "+what)
					byFacade++
				default:
					Expect(resp.StatusCode).NotTo(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), what)
					Expect(probe.Kind).To(BeEmpty(), what)
					allowed++
				}
			}
		}
		Expect([]int{byKube, byFacade, allowed}).To(HaveEach(BeNumerically(">", 0)), "each layer refuses some, and some get through both")
	})

	It("takes forwarded identity headers only from kube-apiserver's front-proxy certificate", func() {
		// One client, so one kept-alive connection, per certificate: the
		// facade remembers a connection's check, and must drop it when
		// the trust changes.
		clients := map[*tls.Certificate]*http.Client{}
		forged := func(cert *tls.Certificate, user string) reply {
			GinkgoHelper()
			hc, ok := clients[cert]
			if !ok {
				conf := &tls.Config{RootCAs: servingCA.Pool(), MinVersion: tls.VersionTLS12}
				if cert != nil {
					conf.Certificates = []tls.Certificate{*cert}
				}
				hc = &http.Client{Transport: &http.Transport{TLSClientConfig: conf}}
				clients[cert] = hc
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, aggDirectURL+"/api/v1/node", nil)
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("X-Remote-User", user)
			req.Header.Set("X-Remote-Group", "system:masters")
			resp, err := hc.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			var r reply
			Expect(json.NewDecoder(resp.Body).Decode(&r)).To(Succeed())
			r.HTTP = resp.StatusCode
			return r
		}
		issue := func(ca *testenv.CA, cn string) *tls.Certificate {
			GinkgoHelper()
			c, k, err := ca.Issue(testenv.Leaf{CommonName: cn, Client: true})
			Expect(err).NotTo(HaveOccurred())
			pair, err := tls.X509KeyPair(c, k)
			Expect(err).NotTo(HaveOccurred())
			return &pair
		}
		rogue, err := testenv.NewCA("rogue")
		Expect(err).NotTo(HaveOccurred())

		By("headers alone, a certificate of another CA, or of the right CA for a name not allowed")
		Expect(forged(nil, "system:admin").HTTP).To(Equal(http.StatusUnauthorized))
		Expect(forged(issue(rogue, testenv.FrontProxyClientName), "system:admin").HTTP).To(Equal(http.StatusUnauthorized))
		Expect(forged(issue(frontProxyCA, "someone-else"), "system:admin").HTTP).To(Equal(http.StatusUnauthorized))

		By("kube-apiserver's own front-proxy certificate: the forwarded user, with that user's rights")
		r := forged(issue(frontProxyCA, testenv.FrontProxyClientName), "agg-forwarded")
		Expect(r.HTTP).To(Equal(http.StatusOK), "system:masters, forwarded as the group: %s", r.Message)

		By("a new CA added to the ConfigMap is trusted once the facade sees it, and no longer once it is gone")
		next, err := testenv.NewCA("front-proxy-ca-next")
		Expect(err).NotTo(HaveOccurred())
		rotated := issue(next, testenv.FrontProxyClientName)
		Expect(forged(rotated, "agg-rotated").HTTP).To(Equal(http.StatusUnauthorized))
		editCA := func(edit func(string) string) {
			GinkgoHelper()
			cm := &corev1.ConfigMap{}
			key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "extension-apiserver-authentication"}
			Expect(k8sClient.Get(ctx, key, cm)).To(Succeed())
			cm.Data["requestheader-client-ca-file"] = edit(cm.Data["requestheader-client-ca-file"])
			Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		}
		editCA(func(pem string) string { return pem + string(next.PEM) })
		Eventually(func() int { return forged(rotated, "agg-rotated").HTTP }).Should(Equal(http.StatusOK))
		editCA(func(pem string) string { return strings.Replace(pem, string(next.PEM), "", 1) })
		Eventually(func() int { return forged(rotated, "agg-rotated").HTTP }).Should(Equal(http.StatusUnauthorized), "on the connection it was accepted on")
		Expect(forged(issue(frontProxyCA, testenv.FrontProxyClientName), "agg-forwarded").HTTP).To(Equal(http.StatusOK))
	})
})

// withoutUptime is a decoded body without its uptime fields.
func withoutUptime(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if !strings.EqualFold(k, "uptime") {
				out[k] = withoutUptime(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutUptime(e)
		}
		return out
	}
	return v
}
