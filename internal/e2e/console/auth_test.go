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
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/testenv"
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
		crt, key, err := ca.IssueFiles(testenv.Leaf{CommonName: "facade", DNSNames: []string{"localhost"}}, dir, "tls")
		Expect(err).NotTo(HaveOccurred())
		mgr, err := ctrl.NewManager(sys.Cfg, ctrl.Options{Scheme: testenv.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
			Cache: controllers.CacheOptions(controllers.DefaultOptions())})
		Expect(err).NotTo(HaveOccurred())
		ao := apiserver.DefaultOptions()
		ao.BindAddress, ao.Auth, ao.TLSCertFile, ao.TLSKeyFile = "127.0.0.1:0", apiserver.AuthKubernetes, crt, key
		srv, err := apiserver.New(mgr, ao)
		Expect(err).NotTo(HaveOccurred())
		Expect(mgr.Add(srv)).To(Succeed())
		go func() { _ = mgr.Start(ctx) }()
		Eventually(srv.Addr).ShouldNot(BeEmpty())
		base = "https://" + srv.Addr()

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
})
