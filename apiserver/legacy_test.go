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
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
)

// raw sends a request with headers and returns the response and its body,
// for what do cannot: HEAD, and CORS headers.
func raw(method, url string, header map[string]string) (*http.Response, []byte) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	Expect(err).NotTo(HaveOccurred())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := clientFor(url).Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp, body
}

// envelopeStatus checks that a body is the envelope and returns its status.
func envelopeStatus(body []byte) int {
	GinkgoHelper()
	var e struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	Expect(json.Unmarshal(body, &e)).To(Succeed(), "%s", body)
	Expect(e.Message).NotTo(BeEmpty())
	return e.Status
}

var _ = Describe("Legacy clients", func() {
	Context("the record detail's config", func() {
		DescribeTable("always holds every key of its kind, empty when unset",
			func(ref string, config *edgev1alpha1.ServiceConfig, vsoa *edgev1alpha1.VSOAConfig, wantConfig, wantVSOA any) {
				name := unique("leg-cfg")
				s := &edgev1alpha1.EdgeService{
					ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: name},
					Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{
						Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(ref)}, Config: config, VSOA: vsoa}, Nodes: []string{"leg-node"}},
				}
				Expect(k8sClient.Create(ctx, s)).To(Succeed())
				rec := &edgev1alpha1.DeployRecord{}
				Eventually(func() error {
					return k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: name + "-1"}, rec)
				}).Should(Succeed())
				var r reply
				Eventually(func() int { r = api("/api/v1/service/record/" + string(rec.UID)); return r.Status }).Should(Equal(http.StatusOK))
				got := r.object()
				Expect(got["config"]).To(Equal(wantConfig))
				Expect(got).To(HaveKey("vsoa"))
				if wantVSOA == nil {
					Expect(got["vsoa"]).To(BeNil())
				} else {
					Expect(got["vsoa"]).To(Equal(wantVSOA))
				}
			},
			Entry("a Linux config with one key set", "gw@1#linux",
				&edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Hostname: "gw"}}, nil,
				map[string]any{"hostname": "gw", "env": []any{}, "cmd": []any{}, "name": "", "restart": "", "network": "", "memory": 0.0, "healthCmd": []any{}}, nil),
			Entry("no config for a Linux image", "gw@1#linux", nil, nil,
				map[string]any{"hostname": "", "env": []any{}, "cmd": []any{}, "name": "", "restart": "", "network": "", "memory": 0.0, "healthCmd": []any{}}, nil),
			Entry("no config for an image of the embedded real-time OS", "ctl@1#sylixos", nil, nil,
				map[string]any{"name": "", "env": []any{}, "cmd": []any{}, "restart": "", "memory": 0.0, "priority": 0.0}, nil),
			Entry("an embedded config with a priority, and messaging with only a port", "ctl@1#sylixos",
				&edgev1alpha1.ServiceConfig{Embedded: &edgev1alpha1.EmbeddedConfig{Name: "ctl", Priority: ptr.To[int32](5)}},
				&edgev1alpha1.VSOAConfig{Port: 3001},
				map[string]any{"name": "ctl", "env": []any{}, "cmd": []any{}, "restart": "", "memory": 0.0, "priority": 5.0},
				map[string]any{"port": 3001.0, "healthPath": "", "healthIntervalMs": 0.0, "healthTimeoutMs": 0.0, "healthStartDelayMs": 0.0}),
		)
	})

	Context("tolerance", func() {
		It("answers a GET route with a trailing slash as without it, and only GET routes", func() {
			createNode("leg-slash", "linux", "amd64")
			want := api("/api/v1/node" + query("name", "leg-slash", "basicInfo", "true"))
			Expect(want.Status).To(Equal(http.StatusOK))
			got := api("/api/v1/node/" + query("name", "leg-slash", "basicInfo", "true"))
			Expect(got.Status).To(Equal(http.StatusOK))
			Expect(got.Data).To(MatchJSON(want.Data))
			Expect(api("/api/v1/service/record/nope/").Status).To(Equal(http.StatusNotFound), "the {id} route, with its own 404")
			Expect(sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder/", map[string]string{"path": "/", "name": "slash"}).Status).
				To(Equal(http.StatusNotFound), "writes stay strict")
		})

		It("reads an empty pageNum= or pageSize= as not given, and stays strict about the rest", func() {
			r := api("/api/v1/node?pageNum=&pageSize=")
			Expect(r.Status).To(Equal(http.StatusOK))
			Expect(r.object()).To(And(HaveKeyWithValue("pageNum", 1.0), HaveKeyWithValue("pageSize", 10.0)))
			for _, q := range []string{"pageSize=0", "pageNum=0", "pageSize=abc", "pageNum=&pageNum=2"} {
				Expect(api("/api/v1/node?"+q).Status).To(Equal(http.StatusBadRequest), q)
			}
		})

		It("answers HEAD on every GET route as GET, without a body", func() {
			createNode("leg-head", "linux", "amd64")
			for _, rt := range apiserver.Routes() {
				path := strings.ReplaceAll(rt.Pattern, "{id}", "nope")
				switch rt.Name {
				case "listContainersOfServices":
					path += "?serviceIds[]=x"
				case "listContainersOfNodes":
					path += "?nodeIds[]=x"
				case "listRecords":
					path += "?id=x"
				case "listServicesByPath":
					path += "?path=/x"
				}
				if rt.Method != http.MethodGet && slices.ContainsFunc(apiserver.Routes(), func(o apiserver.RouteAccess) bool {
					return o.Pattern == rt.Pattern && o.Method == http.MethodGet
				}) {
					continue // HEAD is the GET route's
				}
				resp, body := raw(http.MethodHead, baseURL+path, nil)
				if rt.Method != http.MethodGet {
					Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed), rt.Pattern)
					Expect(resp.Header.Get("Allow")).To(Equal(rt.Method))
					continue
				}
				Expect(resp.StatusCode).To(Equal(get(baseURL+path).Status), "HEAD %s", path)
				Expect(body).To(BeEmpty())
				Expect(resp.Header.Get("Content-Type")).To(Equal("application/json"))
				validateRequest(http.MethodHead, baseURL+path, "", nil, "", resp.StatusCode)
			}
			resp, _ := raw(http.MethodPut, baseURL+"/api/v1/node", nil)
			Expect(resp.Header.Get("Allow")).To(Equal("GET, HEAD, POST"))
		})
	})

	Context("a browser console", func() {
		preflight := func(url, origin, method string) (*http.Response, []byte) {
			return raw(http.MethodOptions, url, map[string]string{
				"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "content-type",
			})
		}

		It("gets no CORS headers by default", func() {
			resp, body := preflight(baseURL+"/api/v1/service/path", consoleOrigin, http.MethodDelete)
			Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed))
			Expect(envelopeStatus(body)).To(Equal(http.StatusMethodNotAllowed))
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(BeEmpty())
			resp, _ = raw(http.MethodGet, baseURL+"/api/v1/node", map[string]string{"Origin": consoleOrigin})
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(BeEmpty())
		})

		It("passes a real preflight from a listed origin, and only from it", func() {
			resp, body := preflight(tlsURL+"/api/v1/service/path", consoleOrigin, http.MethodDelete)
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(envelopeStatus(body)).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(Equal(consoleOrigin))
			Expect(resp.Header.Get("Access-Control-Allow-Methods")).To(ContainSubstring("DELETE"))
			Expect(resp.Header.Get("Access-Control-Allow-Headers")).To(Equal("Content-Type"), "no Authorization without --auth=kubernetes")
			Expect(resp.Header.Values("Vary")).To(ContainElement("Origin"))

			By("the request that follows carries the header too")
			resp, _ = raw(http.MethodGet, tlsURL+"/api/v1/node", map[string]string{"Origin": consoleOrigin})
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(Equal(consoleOrigin))

			By("another origin gets a 403 preflight and no header")
			resp, body = preflight(tlsURL+"/api/v1/service/path", "https://evil.example", http.MethodDelete)
			Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
			Expect(envelopeStatus(body)).To(Equal(http.StatusForbidden))
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(BeEmpty())
			resp, _ = raw(http.MethodGet, tlsURL+"/api/v1/node", map[string]string{"Origin": "https://evil.example"})
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(BeEmpty())
		})

		It("allows the Authorization header under --auth=kubernetes, and the preflight needs no token", func() {
			resp, _ := preflight(authURL+"/api/v1/node", consoleOrigin, http.MethodGet)
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("Access-Control-Allow-Headers")).To(Equal("Authorization, Content-Type"))
			resp, _ = raw(http.MethodGet, authURL+"/api/v1/node", map[string]string{"Origin": consoleOrigin})
			Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), "the request itself still needs a token")
			Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(Equal(consoleOrigin), "so the page can read the 401")
		})
	})
})
