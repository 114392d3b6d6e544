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
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/testenv"
)

// System is a control plane (envtest) with the manager running its
// reconcilers and the facade, as the end-to-end suites use it.
type System struct {
	Env    *envtest.Environment
	Cfg    *rest.Config
	Client client.Client
	// Base is the facade's URL.
	Base string
}

// StartSystem starts the control plane, creates the lease namespace and
// runs the manager with o until ctx is done. configure changes the
// control plane before it starts (API aggregation, for one).
func StartSystem(ctx context.Context, o controllers.Options, configure ...func(*envtest.Environment) error) (*System, error) {
	env, cfg, c, err := testenv.Start(configure...)
	if err != nil {
		return nil, err
	}
	s := &System{Env: env, Cfg: cfg, Client: c}
	fail := func(err error) (*System, error) { return nil, errors.Join(err, env.Stop()) }
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.LeaseNamespace}}); err != nil {
		return fail(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Cache: controllers.CacheOptions(o)})
	if err != nil {
		return fail(err)
	}
	if err := controllers.Setup(ctx, mgr, o); err != nil {
		return fail(err)
	}
	ao := apiserver.DefaultOptions()
	ao.BindAddress = "127.0.0.1:0"
	srv, err := apiserver.New(mgr, ao)
	if err != nil {
		return fail(err)
	}
	if err := mgr.Add(srv); err != nil {
		return fail(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	for deadline := time.Now().Add(30 * time.Second); srv.Addr() == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fail(errors.New("the facade did not start"))
		}
	}
	s.Base = "http://" + srv.Addr()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.Base + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("the facade at %s did not become ready", s.Base))
		}
	}
}

// StartSuite runs a System for a Ginkgo suite, called from its
// BeforeSuite: logs go to the GinkgoWriter, and the system stops when the
// suite ends.
func StartSuite(o controllers.Options, configure ...func(*envtest.Environment) error) (context.Context, *System) {
	GinkgoHelper()
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel := context.WithCancel(context.Background())
	sys, err := StartSystem(ctx, o, configure...)
	if err != nil {
		cancel()
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		cancel()
		Expect(sys.Env.Stop()).To(Succeed())
	})
	return ctx, sys
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
