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

package console_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// token is a ServiceAccount token of the API server's audience.
func token(name string) string {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(sys.Cfg)
	Expect(err).NotTo(HaveOccurred())
	Expect(sys.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})).To(Succeed())
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// aggregatedService is the Service the APIService of the facade names.
const aggregatedService = "edgeplane-facade"

// kubeProxy serves kube-apiserver on loopback as kubectl proxy does: with
// the credentials it holds (here a token), whatever the browser sends.
func kubeProxy(token string) string {
	GinkgoHelper()
	c := rest.AnonymousClientConfig(sys.Cfg)
	c.BearerToken = token
	rt, err := rest.TransportFor(c)
	Expect(err).NotTo(HaveOccurred())
	target, err := url.Parse(sys.Cfg.Host)
	Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewServer(&httputil.ReverseProxy{Transport: rt, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Del("Authorization")
	}})
	Expect(bnet.reach(srv.URL)).To(Succeed())
	DeferCleanup(func() {
		// The page polls every few seconds: it leaves the proxy before the
		// proxy goes, or its next poll is a refused connection in the
		// browser's log (when the next spec is slow to navigate).
		c, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		Expect(chromedp.Do(c, chromedp.Navigate("about:blank"))).To(Succeed())
		srv.Close()
	})
	return srv.URL
}

// shippedRole applies one of the facade's client roles as config/rbac ships it.
func shippedRole(name string) {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "rbac", "facade_roles.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	for {
		var r rbacv1.ClusterRole
		if dec.Decode(&r) != nil {
			break
		}
		if r.Name == name {
			Expect(sys.Client.Create(ctx, &r)).To(Succeed())
			return
		}
	}
	Fail("no role " + name)
}

var _ = Describe("The console under --auth=kubernetes", Ordered, func() {
	var base, viewer, nobody string

	BeforeAll(func() {
		// A second facade, as a read replica serves it: TLS and tokens.
		dir := GinkgoT().TempDir()
		ca, err := testenv.NewCA("console-suite")
		Expect(err).NotTo(HaveOccurred())
		// It is also the backend of the aggregated API: its certificate
		// names the Service kube-apiserver asks for.
		crt, key, err := ca.IssueFiles(testenv.Leaf{CommonName: "facade", DNSNames: []string{"localhost", aggregatedService + ".default.svc"}}, dir, "tls")
		Expect(err).NotTo(HaveOccurred())
		// As the manager binary runs a read replica: the facade alone.
		mo := manager.ForTest(controllers.DefaultOptions())
		mo.RunControllers = false
		mo.API.Auth, mo.API.TLSCertFile, mo.API.TLSKeyFile = apiserver.AuthKubernetes, crt, key
		m, err := manager.New(ctx, sys.Cfg, mo)
		Expect(err).NotTo(HaveOccurred())
		go func() { _ = m.Start(ctx) }()
		Eventually(m.FacadeAddr).ShouldNot(BeEmpty())
		base = "https://" + m.FacadeAddr()
		Expect(bnet.reach(base)).To(Succeed())
		// The browser comes only once the facade answers from a synced
		// cache: an early 503 would be a console error no spec expects.
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
		Eventually(func() int {
			resp, err := hc.Get(base + "/readyz")
			if err != nil {
				return 0
			}
			_ = resp.Body.Close()
			return resp.StatusCode
		}, "60s").Should(Equal(http.StatusOK))
		_, port, err := net.SplitHostPort(m.FacadeAddr())
		Expect(err).NotTo(HaveOccurred())
		portNum, err := strconv.Atoi(port)
		Expect(err).NotTo(HaveOccurred())
		Expect(testenv.RegisterAPIService(ctx, sys.Client, apiserver.AggregatedGroup, apiserver.AggregatedVersion, "default", aggregatedService, portNum, ca.PEM)).To(Succeed())

		shippedRole("facade-viewer")
		viewer, nobody = token("console-viewer"), token("console-nobody")
		Expect(sys.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "console-viewer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "facade-viewer"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "console-viewer"}},
		})).To(Succeed())
	})

	useToken := func(t string) {
		GinkgoHelper()
		Expect(chromedp.Do(bounded(), chromedp.SetValue(chromedp.CSS(`form.token input[name=token]`), t),
			chromedp.Click(chromedp.CSS(`form.token button[type=submit]`)), waitDrawn())).To(Succeed())
	}

	It("asks for a token, tells a refused one (401) from a role that may not (403), and keeps it in sessionStorage only", func() {
		expectRefusals(base, "40[13]", "/api/v1/")
		Expect(chromedp.Do(bounded(), chromedp.Navigate(base+"/console/#/nodes"), waitDrawn())).To(Succeed())
		Expect(text(".live .alert")).To(ContainSubstring("The facade asks for a token (401)."))

		useToken("not-a-token")
		Eventually(func() string { return text(".live .alert") }).Should(ContainSubstring("The facade refused this token (401)"))

		useToken(nobody)
		Eventually(func() string { return text(".live .alert") }).Should(ContainSubstring("its role may not do this (403)"))
		Expect(text(".live .alert .detail")).To(And(ContainSubstring("system:serviceaccount:default:console-nobody"), ContainSubstring("may not list edgenodes")))
		screenshot("forbidden")

		useToken(viewer)
		Eventually(func() int { return eval[int](`document.querySelectorAll('.live tbody tr').length`) }).Should(BeNumerically(">=", 4))
		Expect(eval[string](`sessionStorage.getItem('edgeplane.token')`)).To(Equal(viewer))
		Expect(eval[int](`localStorage.length`)).To(BeZero())
		Expect(eval[string](`location.href`)).NotTo(ContainSubstring(viewer))
		Expect(text("#auth")).To(ContainSubstring("token set"))
	})

	It("tells a viewer why a change of a service is refused (403), and writes nothing", func() {
		svc := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "viewer-fleet"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "web@1.0#linux"},
				Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](1)}}}
		Expect(sys.Client.Create(ctx, svc)).To(Succeed())
		DeferCleanup(func() { Expect(sys.Client.Delete(ctx, svc)).To(Succeed()) })
		expectRefusals(base, "403", "/api/v1/service/")
		Expect(chromedp.Do(bounded(), chromedp.Navigate(base+"/console/#/nodes"), waitDrawn())).To(Succeed())
		eval[bool](fmt.Sprintf(`sessionStorage.setItem('edgeplane.token', %q); true`, viewer))
		Expect(chromedp.Do(bounded(), chromedp.Navigate(fmt.Sprintf("%s/console/#/service/%s?name=viewer-fleet", base, svc.UID)), waitDrawn())).To(Succeed())
		Eventually(func() bool { return eval[bool](`!!document.querySelector('form[data-form=scale]')`) }).Should(BeTrue(), "a viewer reads the service")
		Expect(chromedp.Do(bounded(), chromedp.SetValue(chromedp.CSS(`form[data-form=scale] [name=factor]`), "3"),
			chromedp.Click(chromedp.CSS(`form[data-form=scale] button[type=submit]`)))).To(Succeed())
		Eventually(func() string { return text(`form[data-form=scale] .result`) }).Should(
			And(ContainSubstring("its role may not do this (403); nothing was written"), ContainSubstring("may not patch edgeservices")))
		screenshot("service-forbidden")
		Expect(sys.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		Expect(svc.Spec.Factor).To(Equal(ptr.To[int32](1)))
		Expect(svc.Generation).To(Equal(int64(1)))
	})

	It("works through kube-apiserver, under the aggregated prefix, as kubectl proxy serves it", func() {
		Eventually(func() string {
			status, _, _ := testenv.APIServiceAvailable(ctx, sys.Client, apiserver.AggregatedVersion+"."+apiserver.AggregatedGroup)
			return status
		}, time.Minute).Should(Equal("True"))
		proxy := kubeProxy(viewer)
		root := proxy + apiserver.AggregatedPrefix + "/console/"
		// The facade answers 503 for its first moment as a backend, until
		// it has read kube-apiserver's front-proxy settings.
		expectRefusals(proxy, "50[03]", apiserver.AggregatedPrefix+"/api/v1/")
		Expect(chromedp.Do(bounded(), chromedp.Navigate(root+"#/"), waitDrawn())).To(Succeed())
		online := func() string {
			up, all := 0, 0
			for _, n := range sys.List(ctx, "/api/v1/node", "pageSize", "-1").List {
				all++
				if n["status"] == "online" {
					up++
				}
			}
			return fmt.Sprintf("%d / %d", up, all)
		}
		Eventually(func() string {
			return eval[string](`document.querySelector('a.ring[aria-label^="Nodes online"] .card-figure')?.textContent || ''`)
		}).Should(Equal(online()))
		Expect(eval[string](`location.pathname`)).To(Equal(apiserver.AggregatedPrefix + "/console/"))
		Expect(eval[int](`sessionStorage.length`)).To(BeZero(), "the proxy holds the credentials; the page none")
		screenshot("aggregated-overview")

		By("the template tree, through the same door")
		Expect(chromedp.Do(bounded(), chromedp.Navigate(root+"#/templates"), waitDrawn())).To(Succeed())
		total := sys.List(ctx, "/api/v1/provision-template/path-label").Total
		Eventually(func() string {
			return eval[string](`document.querySelector(".live h2")?.textContent || document.querySelector(".live").textContent`)
		}).Should(Equal(fmt.Sprintf("/ (%d)", total)))

		By("a write the viewer may not do: kube-apiserver refuses it, and the console says 403")
		expectRefusals(proxy, "403", apiserver.AggregatedPrefix+"/api/v1/")
		Expect(chromedp.Do(bounded(), chromedp.SetValue(chromedp.CSS(`#folder-name`), "viewer-may-not"),
			chromedp.Click(chromedp.CSS(`form.create:nth-of-type(1) button[type=submit]`)))).To(Succeed())
		Eventually(func() string { return text(`form.create:nth-of-type(1) .result`) }).Should(ContainSubstring("(403)"))
		Expect(sys.List(ctx, "/api/v1/provision-template/path-label").Total).To(Equal(total), "nothing was created")
	})
})
