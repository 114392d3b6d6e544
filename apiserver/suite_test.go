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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The facade runs in a real manager, next to the reconcilers, against a
// real kube-apiserver; the tests speak to it over HTTP as a legacy client
// would. A second facade with --auth=kubernetes serves the auth tests.
// Every response the tests read is validated against openapi.json.

const facadeNamespace = "legacy"

var (
	ctx       context.Context
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	opts      controllers.Options
	baseURL   string // the facade without auth
	authURL   string // the facade with --auth=kubernetes
	tlsURL    string // the facade with TLS
	tlsCA     *x509.CertPool
	// tlsFiles are the certificate and key of the facades with TLS.
	tlsFiles []string
	openAPI  *openapi3.T
	// The facade behind kube-apiserver's aggregation layer: aggURL is its
	// prefix on kube-apiserver, called as the suite's admin through
	// kubeHTTP; aggDirectURL is the same facade called directly, with a
	// certificate of servingCA; frontProxyCA signs what kube-apiserver
	// presents to it.
	aggURL, aggDirectURL string
	kubeURL              string // kube-apiserver, without a trailing slash
	kubeHTTP             *http.Client
	servingCA            *testenv.CA
	frontProxyCA         *testenv.CA
)

// The Service the APIService names: an ExternalName to localhost.
const (
	aggregatedServiceNS = "default"
	aggregatedService   = "edgeplane-facade"
)

func TestAPIServer(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	testenv.RunSpecs(t, "Facade suite")
}

var _ = BeforeSuite(func() {
	testenv.CheckLeaks()
	dir := GinkgoT().TempDir()
	ctx, testEnv, cfg, k8sClient = testenv.StartSuite(testenv.Aggregated(dir, &frontProxyCA))

	data, err := os.ReadFile(filepath.Join("openapi.json"))
	Expect(err).NotTo(HaveOccurred())
	openAPI, err = openapi3.NewLoader().LoadFromData(data)
	Expect(err).NotTo(HaveOccurred())
	Expect(openAPI.Validate(ctx)).To(Succeed(), "openapi.json must be a valid OpenAPI 3 document")

	kubeHTTP, err = rest.HTTPClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	opts = controllers.DefaultOptions()
	// The suite's agents renew every 500 ms (renewLeases); a grace period
	// of a minute is one a busy machine cannot trip, so a node goes
	// offline only when a spec takes its Lease away.
	opts.NodeGracePeriod = time.Minute
	opts.RescheduleGrace = 3 * time.Second
	opts.DeletionTimeout = time.Hour // a stuck finalizer stays stuck unless forced
	for _, ns := range []string{opts.LeaseNamespace, facadeNamespace} {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	// The manager as cmd/manager runs it, with the facade on baseURL
	// beside it; the other facades share its cache, as further listeners
	// of one process would.
	mo := manager.ForTest(opts)
	mo.API = facadeOptions(apiserver.AuthNone, nil, nil)
	m, err := manager.New(ctx, cfg, mo)
	Expect(err).NotTo(HaveOccurred())
	mgr := m.Manager
	tlsFiles = []string{filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")}
	tlsCA = writeCert(tlsFiles)
	// The facade on baseURL has no CORS origins (the default); the other
	// two allow consoleOrigin.
	withTLS := startFacade(mgr, apiserver.AuthNone, tlsFiles, []string{consoleOrigin})
	secured := startFacade(mgr, apiserver.AuthKubernetes, tlsFiles, []string{consoleOrigin}, facadeAudience)
	// The aggregated facade's certificate names the Service as the
	// aggregator asks for it.
	servingCA, err = testenv.NewCA("facade-serving-ca")
	Expect(err).NotTo(HaveOccurred())
	crt, key, err := servingCA.IssueFiles(testenv.Leaf{CommonName: aggregatedService,
		DNSNames: []string{aggregatedService + "." + aggregatedServiceNS + ".svc", "localhost"}}, dir, "aggregated")
	Expect(err).NotTo(HaveOccurred())
	aggregated := startFacade(mgr, apiserver.AuthKubernetes, []string{crt, key}, nil)
	go func() {
		defer GinkgoRecover()
		Expect(m.Start(ctx)).To(Succeed())
	}()
	Eventually(m.FacadeAddr).ShouldNot(BeEmpty())
	baseURL, authURL, tlsURL = "http://"+m.FacadeAddr(), strings.Replace(secured(), "http://", "https://", 1), strings.Replace(withTLS(), "http://", "https://", 1)
	aggDirectURL = strings.Replace(aggregated(), "http://", "https://", 1)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(aggDirectURL, "https://"))
	Expect(err).NotTo(HaveOccurred())
	portNum, err := strconv.Atoi(port)
	Expect(err).NotTo(HaveOccurred())
	Expect(testenv.RegisterAPIService(ctx, k8sClient, apiserver.AggregatedGroup, apiserver.AggregatedVersion,
		aggregatedServiceNS, aggregatedService, portNum, servingCA.PEM)).To(Succeed())
	kubeURL = strings.TrimSuffix(cfg.Host, "/")
	aggURL = kubeURL + apiserver.AggregatedPrefix
	go renewLeases()
	// Each facade sets its own readiness once the cache and its indexes
	// have synced.
	for _, u := range []string{baseURL, authURL, tlsURL} {
		Eventually(func() int { return get(u + "/readyz").Status }).Should(Equal(http.StatusOK), u)
	}
})

// facadeOptions are the options of one of the suite's facades.
func facadeOptions(auth string, tlsFiles, origins []string, audiences ...string) apiserver.Options {
	o := apiserver.DefaultOptions()
	o.BindAddress, o.Namespace, o.Auth, o.Audiences, o.CORSAllowedOrigins = "127.0.0.1:0", facadeNamespace, auth, audiences, origins
	if tlsFiles != nil {
		o.TLSCertFile, o.TLSKeyFile = tlsFiles[0], tlsFiles[1]
	}
	o.Location = time.FixedZone("UTC+8", 8*3600)
	return o
}

// startFacade runs one more facade on mgr's cache, beside the manager as
// internal/manager runs its own, and returns a function that waits for
// its URL.
func startFacade(mgr ctrl.Manager, auth string, tlsFiles, origins []string, audiences ...string) func() string {
	GinkgoHelper()
	srv, err := apiserver.New(mgr, facadeOptions(auth, tlsFiles, origins, audiences...))
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer GinkgoRecover()
		Expect(srv.Start(ctx)).To(Succeed())
	}()
	return func() string {
		Eventually(srv.Addr).ShouldNot(BeEmpty())
		return "http://" + srv.Addr()
	}
}

// reply is a decoded envelope with its HTTP status.
type reply struct {
	HTTP        int
	Status      int               `json:"status"`
	Message     string            `json:"message"`
	FieldErrors map[string]string `json:"fieldErrors"`
	Data        json.RawMessage   `json:"data"`
	raw         any
}

// into decodes the data of a reply.
func (r reply) into(v any) {
	GinkgoHelper()
	Expect(json.Unmarshal(r.Data, v)).To(Succeed())
}

// object is the data as a generic JSON object, to check the exact keys.
func (r reply) object() map[string]any {
	GinkgoHelper()
	var m map[string]any
	r.into(&m)
	return m
}

func get(url string) reply { return do(http.MethodGet, url, "", nil, "") }

func api(path string) reply { GinkgoHelper(); return get(baseURL + path) }

func sendJSON(method, path string, body any) reply {
	GinkgoHelper()
	data, err := json.Marshal(body)
	Expect(err).NotTo(HaveOccurred())
	return do(method, baseURL+path, "application/json", data, "")
}

// do sends a request and checks what every response of the facade must
// be: the envelope, as JSON, with the HTTP status in it, matching the
// OpenAPI document for the route and status.
func do(method, url, contentType string, body []byte, token string) reply {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := clientFor(url).Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.Header.Get("Content-Type")).To(Equal("application/json"), "body: %s", data)
	var r reply
	Expect(json.Unmarshal(data, &r)).To(Succeed(), "body: %s", data)
	Expect(json.Unmarshal(data, &r.raw)).To(Succeed())
	r.HTTP = resp.StatusCode
	Expect(r.Status).To(Equal(resp.StatusCode), "the envelope's status is the HTTP status: %s", data)
	Expect(r.Message).NotTo(BeEmpty())
	if r.Status != http.StatusOK {
		Expect(string(r.Data)).To(Equal("null"), "data is null on failure")
	} else {
		Expect(r.FieldErrors).To(BeNil())
	}
	validate(method, req.URL.Path, r)
	validateRequest(method, url, contentType, body, token, r.HTTP)
	return r
}

// clientFor is the client for a facade URL: for https, one that trusts the
// suite's certificate.
func clientFor(url string) *http.Client {
	if strings.HasPrefix(url, kubeURL+"/") {
		return kubeHTTP
	}
	if strings.HasPrefix(url, aggDirectURL+"/") {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: servingCA.Pool(), MinVersion: tls.VersionTLS12}}}
	}
	if strings.HasPrefix(url, "https://") {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tlsCA, MinVersion: tls.VersionTLS12}}}
	}
	return http.DefaultClient
}

// validateRequest checks a request against the OpenAPI document, both
// ways: a request the facade accepted (2xx) must be valid by the
// document, and one the document calls invalid must have been refused
// (4xx). So neither the document nor the facade can drift from the other.
func validateRequest(method, rawURL, contentType string, body []byte, token string, status int) {
	GinkgoHelper()
	if method == http.MethodHead {
		method = http.MethodGet // HEAD is GET without the body
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	path := strings.TrimPrefix(req.URL.Path, apiserver.AggregatedPrefix)
	if method == http.MethodGet && len(path) > 1 {
		path = strings.TrimSuffix(path, "/") // served as the route itself
	}
	pattern, item := pathItem(path)
	if item == nil || item.GetOperation(method) == nil {
		return
	}
	params := map[string]string{}
	ps, segs := strings.Split(pattern, "/"), strings.Split(path, "/")
	for i := range ps {
		if strings.HasPrefix(ps[i], "{") {
			params[strings.Trim(ps[i], "{}")] = segs[i]
		}
	}
	route := &routers.Route{Spec: openAPI, Path: pattern, PathItem: item, Method: method, Operation: item.GetOperation(method)}
	err = openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
	if status >= 200 && status < 300 {
		Expect(err).NotTo(HaveOccurred(), "%s %s was accepted (%d) but openapi.json calls the request invalid", method, rawURL, status)
	}
	if err != nil {
		Expect(status).To(And(BeNumerically(">=", 400), BeNumerically("<", 500)), "openapi.json calls %s %s invalid (%v), but the facade answered %d", method, rawURL, err, status)
	}
}

// validate checks a reply against the OpenAPI document, for the routes
// of the contract.
func validate(method, path string, r reply) {
	GinkgoHelper()
	op := operation(method, path)
	if op == nil {
		return // probes, unknown routes and wrong methods: the envelope checks above apply
	}
	ref := op.Responses.Status(r.HTTP)
	Expect(ref).NotTo(BeNil(), "openapi.json lists no %d response for %s %s", r.HTTP, method, path)
	schema := ref.Value.Content.Get("application/json").Schema.Value
	Expect(schema.VisitJSON(r.raw)).To(Succeed(), "%s %s answered %d against openapi.json", method, path, r.HTTP)
}

// operation finds the document's operation for a concrete path.
func operation(method, path string) *openapi3.Operation {
	_, item := pathItem(path)
	if item == nil {
		return nil
	}
	return item.GetOperation(method)
}

// pathItem finds the document's path for a concrete path: literal segments
// first, then {parameters}.
func pathItem(path string) (string, *openapi3.PathItem) {
	path = strings.TrimPrefix(path, apiserver.AggregatedPrefix)
	var found *openapi3.PathItem
	var at string
	for pattern, item := range openAPI.Paths.Map() {
		if pattern == path {
			return pattern, item
		}
		if matchPattern(pattern, path) && found == nil {
			found, at = item, pattern
		}
	}
	return at, found
}

func matchPattern(pattern, path string) bool {
	ps, segs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(segs) {
		return false
	}
	for i := range ps {
		if ps[i] != segs[i] && !(strings.HasPrefix(ps[i], "{") && segs[i] != "") {
			return false
		}
	}
	return true
}

// newNamespacedName is a helper for unique names within the suite.
var seq int

func unique(prefix string) string {
	seq++
	return fmt.Sprintf("%s-%d", prefix, seq)
}

// consoleOrigin is the web console's origin that two of the facades allow.
const consoleOrigin = "https://console.example.com"

// facadeAudience is the audience the facade with auth accepts tokens for.
const facadeAudience = "edgeplane-facade-test"

// writeCert writes a new self-signed certificate for 127.0.0.1 and its key
// to files and returns a pool that trusts it.
func writeCert(files []string) *x509.CertPool {
	GinkgoHelper()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(files[1], keyPEM, 0o600)).To(Succeed())
	Expect(os.WriteFile(files[0], certPEM, 0o600)).To(Succeed())
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(certPEM)).To(BeTrue())
	return pool
}
