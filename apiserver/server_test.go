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
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

var _ = Describe("Every response", func() {
	It("is the envelope for unknown routes and wrong methods", func() {
		r := api("/api/v1/nodes")
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(r.Message).To(ContainSubstring("/api/v1/nodes"))
		r = do(http.MethodPost, baseURL+"/api/v1/container/node", "application/json", []byte("{}"), "")
		Expect(r.Status).To(Equal(http.StatusMethodNotAllowed))
		r = do(http.MethodPost, baseURL+"/api/v1/service/path", "application/json", []byte(`{"path":"/"}`), "")
		Expect(r.Status).To(Equal(http.StatusMethodNotAllowed))
		r = do(http.MethodPut, baseURL+"/", "", nil, "")
		Expect(r.Status).To(Equal(http.StatusNotFound))
	})

	It("is counted per route and status code in the manager's metrics", func() {
		api("/api/v1/node")
		api("/api/v1/container/none")
		families, err := metrics.Registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		counts := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "edgeplane_api_requests_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				counts[labels["route"]+" "+labels["code"]] += m.GetCounter().GetValue()
			}
		}
		Expect(counts["listNodes 200"]).To(BeNumerically(">=", 1))
		Expect(counts["getContainer 404"]).To(BeNumerically(">=", 1))
	})

	It("folds methods a client makes up into one metric label value", func() {
		methods := func() map[string]bool {
			families, err := metrics.Registry.Gather()
			Expect(err).NotTo(HaveOccurred())
			out := map[string]bool{}
			for _, f := range families {
				if f.GetName() == "edgeplane_api_requests_total" {
					for _, m := range f.GetMetric() {
						for _, l := range m.GetLabel() {
							if l.GetName() == "method" {
								out[l.GetValue()] = true
							}
						}
					}
				}
			}
			return out
		}
		for i := range 2000 {
			req, err := http.NewRequestWithContext(ctx, fmt.Sprintf("M%06d", i), baseURL+"/api/v1/node", nil)
			Expect(err).NotTo(HaveOccurred())
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			_ = resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed))
		}
		for m := range methods() {
			Expect([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "other"}).To(ContainElement(m))
		}
		Expect(methods()).To(HaveKey("other"))
	})

	It("serves the OpenAPI document of the contract", func() {
		resp, err := http.Get(baseURL + "/api/v1/openapi.json")
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Type")).To(Equal("application/json"))
		served, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		doc, err := openapi3.NewLoader().LoadFromData(served)
		Expect(err).NotTo(HaveOccurred())
		// Every route of the facade, the contract's and edgeplane's, and
		// nothing else.
		routes, operations := map[string]bool{}, map[string]bool{}
		for _, rt := range apiserver.Routes() {
			routes[rt.Method+" "+rt.Pattern] = true
		}
		for p, item := range doc.Paths.Map() {
			for m := range item.Operations() {
				operations[m+" "+p] = true
			}
		}
		Expect(operations).To(Equal(routes))
		file, err := os.ReadFile("openapi.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(served).To(Equal(file), "the document served is the one in the repository")
	})
})

var _ = Describe("The facade given a certificate", func() {
	It("serves HTTPS, and only HTTPS", func() {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tlsCA, MinVersion: tls.VersionTLS12}}}
		resp, err := hc.Get(tlsURL + "/api/v1/node")
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.TLS).NotTo(BeNil())
		plain, err := http.Get(strings.Replace(tlsURL, "https://", "http://", 1) + "/api/v1/node")
		if err == nil {
			defer func() { _ = plain.Body.Close() }()
			Expect(plain.StatusCode).To(Equal(http.StatusBadRequest), "Go answers plain HTTP on a TLS port with 400")
		}
	})

	It("serves a renewed certificate once its files change, without a restart", func() {
		renewed := writeCert(tlsFiles)
		trusting := func(pool *x509.CertPool, url string) error {
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			resp, err := hc.Get(url + "/readyz")
			if err == nil {
				_ = resp.Body.Close()
			}
			return err
		}
		for _, url := range []string{tlsURL, authURL} {
			Eventually(func() error { return trusting(renewed, url) }).Should(Succeed(), url)
			Expect(trusting(tlsCA, url)).NotTo(Succeed(), "the old certificate is gone")
		}
		tlsCA = renewed
	})
})

var _ = Describe("Folders created by racing clients", func() {
	It("make one object and every client gets its id", func() {
		const clients = 8
		ids := make([]any, clients)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				defer GinkgoRecover()
				r := sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "race", "path": "/racing/deep"})
				Expect(r.Status).To(Equal(http.StatusOK), r.Message)
				ids[i] = r.object()["id"]
			})
		}
		wg.Wait()
		for _, id := range ids {
			Expect(id).To(Equal(ids[0]))
		}
		Expect(entriesIn("/racing/deep")).To(Equal([]string{"folder:race"}))
		Expect(entriesIn("/racing")).To(Equal([]string{"folder:deep"}))
	})
})

var _ = Describe("--auth=kubernetes", Ordered, func() {
	var viewer, editor string

	// token makes a ServiceAccount bound to rules and returns a token of it.
	token := func(name string, rules ...rbacv1.PolicyRule) string {
		GinkgoHelper()
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: name}}
		Expect(k8sClient.Create(ctx, sa)).To(Succeed())
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "facade-test-" + name}, Rules: rules}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "facade-test-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: facadeNamespace, Name: name}},
		})).To(Succeed())
		return audienceToken(name, facadeAudience)
	}
	group := edgev1alpha1.GroupVersion.Group

	BeforeAll(func() {
		viewer = token("viewer", rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"edgenodes"}, Verbs: []string{"list"}})
		editor = token("editor", rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"edgeservices"}, Verbs: []string{"list", "delete"}},
			rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"edgeservices/finalizers"}, Verbs: []string{"update"}})
	})

	It("refuses requests without a valid bearer token with 401", func() {
		Expect(do(http.MethodGet, authURL+"/api/v1/node", "", nil, "").Status).To(Equal(http.StatusUnauthorized))
		Expect(do(http.MethodGet, authURL+"/api/v1/node", "", nil, "not-a-token").Status).To(Equal(http.StatusUnauthorized))
	})

	It("neither locks out a real user nor turns a flood of made-up tokens into as many TokenReviews", func() {
		const flooders = 64
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tlsCA, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: flooders}}
		get := func(token string) (int, time.Duration) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL+"/api/v1/node", nil)
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Authorization", "Bearer "+token)
			start := time.Now()
			resp, err := hc.Do(req)
			Expect(err).NotTo(HaveOccurred())
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode, time.Since(start)
		}
		code, _ := get(viewer)
		Expect(code).To(Equal(http.StatusOK))
		reviews := func() float64 {
			counts, err := testenv.APIRequests(ctx, cfg)
			Expect(err).NotTo(HaveOccurred())
			return counts["POST tokenreviews"]
		}
		before, began := reviews(), time.Now()

		// At least 800 made-up tokens (past the review burst), and on until
		// the real user has made its requests and the flood met the limit,
		// for 30 s at most. 64 clients outrun 50 reviews a second as long
		// as a review takes under 1.28 s: on a machine loaded by other
		// suites, 16 did not (each review a round trip to kube-apiserver).
		var wg sync.WaitGroup
		var mu sync.Mutex
		var done, limited atomic.Bool
		codes := map[int]int{}
		stop := time.Now().Add(30 * time.Second)
		for range flooders {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := 0; i < 13 || (!done.Load() || !limited.Load()) && time.Now().Before(stop); i++ {
					b := make([]byte, 24)
					_, _ = rand.Read(b)
					code, _ := get(hex.EncodeToString(b))
					limited.CompareAndSwap(false, code == http.StatusTooManyRequests)
					mu.Lock()
					codes[code]++
					mu.Unlock()
				}
			})
		}
		var took []time.Duration
		for range 500 {
			code, d := get(viewer)
			Expect(code).To(Equal(http.StatusOK), "the real user is served throughout")
			took = append(took, d)
		}
		done.Store(true)
		wg.Wait()
		elapsed := time.Since(began)

		flood := 0
		for _, n := range codes {
			flood += n
		}
		Expect(codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests]).To(Equal(flood), "%v", codes)
		Expect(codes[http.StatusTooManyRequests]).To(BeNumerically(">", 0), "the flood hit the review limit")
		made := reviews() - before
		Expect(made).To(BeNumerically("<=", 100+50*elapsed.Seconds()+10), "TokenReviews are rate-limited: %v in %s", made, elapsed)
		slices.Sort(took)
		AddReportEntry("real user during a flood of made-up tokens",
			fmt.Sprintf("real user p50 %s, p99 %s, max %s over %d requests; flood of %d requests (%d clients); %v TokenReviews in %s; flood answers %v",
				took[len(took)/2], took[len(took)*99/100], took[len(took)-1], len(took), flood, flooders, made, elapsed.Round(time.Millisecond), codes))
	})

	It("refuses a token of the API server's audience: facade tokens are not API server tokens", func() {
		Expect(do(http.MethodGet, authURL+"/api/v1/node", "", nil, audienceToken("viewer")).Status).To(Equal(http.StatusUnauthorized))
		Expect(do(http.MethodGet, authURL+"/api/v1/node", "", nil, viewer).Status).To(Equal(http.StatusOK))
	})

	It("allows each route by the token's RBAC on the kind behind it, else 403", func() {
		Expect(do(http.MethodGet, authURL+"/api/v1/node", "", nil, viewer).Status).To(Equal(http.StatusOK))
		r := do(http.MethodGet, authURL+"/api/v1/container/service"+query("serviceIds[]", "x"), "", nil, viewer)
		Expect(r.Status).To(Equal(http.StatusForbidden))
		Expect(r.Message).To(ContainSubstring("system:serviceaccount:legacy:viewer"))
		Expect(do(http.MethodDelete, authURL+"/api/v1/service/path", "application/json", []byte(`{"path":"/none"}`), viewer).Status).To(Equal(http.StatusForbidden))

		Expect(do(http.MethodGet, authURL+"/api/v1/node", "", nil, editor).Status).To(Equal(http.StatusForbidden))
		Expect(do(http.MethodGet, authURL+"/api/v1/container/service"+query("serviceIds[]", "x"), "", nil, editor).Status).To(Equal(http.StatusOK))
		Expect(do(http.MethodDelete, authURL+"/api/v1/service/path", "application/json", []byte(`{"path":"/none"}`), editor).Status).To(Equal(http.StatusOK))
		Expect(do(http.MethodPost, authURL+"/api/v1/provision-template/path-label/folder", "application/json", []byte(`{"name":"x","path":"/"}`), editor).Status).To(Equal(http.StatusForbidden))
	})
})

// audienceToken is a token of the ServiceAccount name in the facade's
// namespace, for the audiences given (none: the API server's own).
func audienceToken(name string, audiences ...string) string {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(facadeNamespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600), Audiences: audiences},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}
