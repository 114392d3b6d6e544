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

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// System is a control plane (envtest) with the manager running its
// reconcilers and the facade beside them, started as cmd/manager starts
// them (internal/manager), as the end-to-end suites use it.
type System struct {
	Env    *envtest.Environment
	Cfg    *rest.Config
	Client client.Client
	// Base is the facade's URL.
	Base string
	// HubURL and CAHash are how devices reach the edge hub and pin its CA,
	// when the manager serves one (StartHubSuite).
	HubURL, CAHash string
	hubNamespace   string
}

// StartSuite runs a System for a Ginkgo suite, called from its
// BeforeSuite: the control plane, the lease namespace, and the manager
// with o, until the suite ends; logs go to the GinkgoWriter. configure
// changes the control plane before it starts (API aggregation, for one).
func StartSuite(o controllers.Options, configure ...func(*envtest.Environment) error) (context.Context, *System) {
	GinkgoHelper()
	return startSuite(o, false, configure...)
}

// StartHubSuite is StartSuite with the edge hub in the manager, on a
// loopback port: devices join it (System.Join) and talk to it alone.
func StartHubSuite(o controllers.Options, configure ...func(*envtest.Environment) error) (context.Context, *System) {
	GinkgoHelper()
	return startSuite(o, true, configure...)
}

func startSuite(o controllers.Options, hub bool, configure ...func(*envtest.Environment) error) (context.Context, *System) {
	GinkgoHelper()
	ctx, env, cfg, c := testenv.StartSuite(configure...)
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.LeaseNamespace}})).To(Succeed())
	mo := manager.ForTest(o)
	s := &System{Env: env, Cfg: cfg, Client: c}
	if hub {
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mo.Hub.Namespace}})).To(Succeed())
		addr, err := testenv.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		s.HubURL = "https://" + addr
		// The hub's replica Lease is renewed well within the grace period.
		mo.Hub.BindAddress, mo.Hub.AdvertiseURL, mo.Hub.RenewInterval = addr, s.HubURL, min(time.Second, o.NodeGracePeriod/4)
	}
	m, _ := testenv.RunManager(ctx, cfg, mo)
	s.Base = "http://" + m.FacadeAddr()
	Eventually(func() int {
		resp, err := http.Get(s.Base + "/readyz")
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}, 30*time.Second).Should(Equal(http.StatusOK), "the facade at %s becomes ready", s.Base)
	if hub {
		s.hubNamespace = mo.Hub.Namespace
		// Listening, not only holding its CA: the CA is loaded before
		// the replica's Lease is written and the port bound, and a
		// device joining in between was refused.
		Eventually(m.Hub().Addr, 30*time.Second).ShouldNot(BeEmpty(), "the hub listens on %s", s.HubURL)
		s.CAHash = hubapi.CAHash(m.Hub().CACert())
	}
	return ctx, s
}

// Join adds node as kubectl edge node add does (its EdgeNode with labels,
// and a join token) and joins a device as it into dir, as edge-agent join
// does: the identity a device behind the hub runs with.
func (s *System) Join(ctx context.Context, node string, labels map[string]string, dir string) *hubconn.Identity {
	GinkgoHelper()
	n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: labels},
		Spec: edgev1alpha1.EdgeNodeSpec{Address: "127.0.0.1:7200", Type: "linux", Arch: "amd64"}}
	Expect(s.Client.Create(ctx, n)).To(Succeed())
	t, err := hubapi.NewToken()
	Expect(err).NotTo(HaveOccurred())
	Expect(s.Client.Create(ctx, hubapi.JoinSecret(t, s.hubNamespace, node, time.Now().Add(time.Hour)))).To(Succeed())
	id, err := hubconn.Join(ctx, hubconn.JoinOptions{Hub: s.HubURL, Token: t.String(), CAHash: s.CAHash, Dir: dir})
	Expect(err).NotTo(HaveOccurred())
	return id
}

// Call sends a request to the facade and decodes the envelope's data.
func (s *System) Call(ctx context.Context, method, path string, body, data any) int {
	GinkgoHelper()
	var payload []byte
	if body != nil {
		var err error
		payload, err = json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
	}
	req, err := http.NewRequestWithContext(ctx, method, s.Base+path, bytes.NewReader(payload))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	var env struct {
		Status int             `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&env)).To(Succeed())
	if data != nil && env.Status == http.StatusOK {
		Expect(json.Unmarshal(env.Data, data)).To(Succeed())
	}
	return env.Status
}

// Page is one page of a facade list.
type Page struct {
	List  []map[string]any `json:"list"`
	Total int              `json:"total"`
}

// List reads one page of a facade list with the query kv (key, value, ...).
func (s *System) List(ctx context.Context, path string, kv ...string) Page {
	GinkgoHelper()
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	var p Page
	Expect(s.Call(ctx, http.MethodGet, path+"?"+q.Encode(), nil, &p)).To(Equal(http.StatusOK))
	return p
}

// ServiceID is the facade's id of a service in the default namespace.
func (s *System) ServiceID(ctx context.Context, name string) string {
	GinkgoHelper()
	svc := &edgev1alpha1.EdgeService{}
	Expect(s.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, svc)).To(Succeed())
	return string(svc.UID)
}

// ContainersOf lists a service's containers through the facade.
func (s *System) ContainersOf(ctx context.Context, service string) []map[string]any {
	GinkgoHelper()
	return s.List(ctx, "/api/v1/container/service", "serviceIds[]", s.ServiceID(ctx, service), "pageSize", "-1").List
}
