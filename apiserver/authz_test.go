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
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The authorization matrix: every route of the facade, the unknown route,
// the OpenAPI document and the health endpoints, for identities from no
// token to each shipped facade role to a role bound in another namespace.
// What each may do is derived from the route table and the roles' rules,
// not written out by hand.
var _ = Describe("The facade's authorization matrix", Ordered, func() {
	type identity struct {
		name  string
		token string
		rules []rbacv1.PolicyRule // what it may do in the facade's namespace and cluster-wide
	}
	var ids []identity

	BeforeAll(func() {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "facade_roles.yaml"))
		Expect(err).NotTo(HaveOccurred())
		objs, err := testenv.DecodeYAML(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}})).To(Succeed())
		ids = append(ids, identity{name: "no token"})
		sa := func(name string) string {
			GinkgoHelper()
			tok, err := testenv.ServiceAccountToken(ctx, cfg, facadeNamespace, "matrix-"+name, facadeAudience)
			Expect(err).NotTo(HaveOccurred())
			return tok
		}
		ids = append(ids, identity{name: "a token with no role", token: sa("stranger")})
		for _, u := range objs {
			role := &rbacv1.ClusterRole{}
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role)).To(Succeed())
			role.Name = "matrix-" + role.Name
			Expect(k8sClient.Create(ctx, role)).To(Succeed())
			subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: facadeNamespace, Name: role.Name}}
			ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}
			Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}, RoleRef: ref, Subjects: subject})).To(Succeed())
			ids = append(ids, identity{name: strings.TrimPrefix(role.Name, "matrix-"), token: sa(strings.TrimPrefix(role.Name, "matrix-")), rules: role.Rules})

			// The same role, bound only in another namespace: nothing here.
			other := "elsewhere-" + strings.TrimPrefix(role.Name, "matrix-")
			Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: other}, RoleRef: ref,
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: facadeNamespace, Name: "matrix-" + other}},
			})).To(Succeed())
			ids = append(ids, identity{name: other + " (bound in another namespace)", token: sa(other)})
		}
		// Deleting without the permission to remove finalizers: the
		// facade would otherwise force past them on the caller's behalf.
		partial := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "matrix-delete-only"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{edgev1alpha1.GroupVersion.Group}, Resources: []string{"edgeservices"}, Verbs: []string{"get", "list", "delete"},
		}}}
		Expect(k8sClient.Create(ctx, partial)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: partial.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: partial.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: facadeNamespace, Name: partial.Name}}})).To(Succeed())
		ids = append(ids, identity{name: "delete-only", token: sa("delete-only"), rules: partial.Rules})
		Expect(ids).To(HaveLen(2 + 2*3 + 1))
	})

	// send makes a request as a well-behaved client: a 429 (new tokens
	// come faster than the facade reviews them, as after the flood spec)
	// is retried after its Retry-After.
	send := func(method, path, token string) int {
		GinkgoHelper()
		for try := 0; ; try++ {
			var body io.Reader
			if method != http.MethodGet {
				body = strings.NewReader(`{"path":"/matrix-none","name":"m","imageRefs":["m@1#linux"]}`)
			}
			req, err := http.NewRequestWithContext(ctx, method, authURL+path, body)
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := clientFor(authURL).Do(req)
			Expect(err).NotTo(HaveOccurred())
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests || try == 10 {
				return resp.StatusCode
			}
			Expect(resp.Header.Get("Retry-After")).To(Equal("1"))
			time.Sleep(time.Second)
		}
	}
	It("answers each route by the caller's role on the kind behind it", func() {
		Expect(apiserver.Routes()).To(HaveLen(17), "the contract's nine routes, edgeplane's three reads, its three service writes and its two node writes")
		for _, rt := range apiserver.Routes() {
			for _, id := range ids {
				got := send(rt.Method, matrixTarget(rt), id.token)
				if rt.Name == "deleteServicesByPath" && id.name == "delete-only" {
					Expect(got).To(Equal(http.StatusForbidden), "deleting by path forces past finalizers: it needs update on edgeservices/finalizers")
				}
				switch {
				case id.token == "":
					Expect(got).To(Equal(http.StatusUnauthorized), "%s %s as %s", rt.Method, rt.Pattern, id.name)
				case grantsAll(id.rules, rt.Needs):
					Expect(got).NotTo(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), "%s %s as %s", rt.Method, rt.Pattern, id.name)
				default:
					Expect(got).To(Equal(http.StatusForbidden), "%s %s as %s", rt.Method, rt.Pattern, id.name)
				}
			}
		}
	})

	It("answers the unknown route, the OpenAPI document and the health endpoints alike for everyone", func() {
		for _, id := range ids {
			Expect(send(http.MethodGet, "/api/v1/nope", id.token)).To(Equal(http.StatusNotFound), id.name)
			Expect(send(http.MethodGet, "/api/v1/openapi.json", id.token)).To(Equal(http.StatusOK), id.name)
			Expect(send(http.MethodGet, "/healthz", id.token)).To(Equal(http.StatusOK), id.name)
			Expect(send(http.MethodGet, "/readyz", id.token)).To(Equal(http.StatusOK), id.name)
		}
	})
})

// matrixTarget is a request on the route that passes its own checks far
// enough for authorization to be the question.
func matrixTarget(rt apiserver.RouteAccess) string {
	p := strings.ReplaceAll(rt.Pattern, "{id}", "00000000-0000-0000-0000-000000000000")
	switch rt.Name {
	case "listContainersOfServices":
		p += "?serviceIds[]=x"
	case "listContainersOfNodes":
		p += "?nodeIds[]=x"
	case "listRecords":
		p += "?id=x"
	case "listServicesByPath":
		p += "?path=/matrix-none"
	}
	return p
}

// grantsAll says whether rules allow every one of needs.
func grantsAll(rules []rbacv1.PolicyRule, needs []apiserver.Permission) bool {
	for _, p := range needs {
		if !grants(rules, p.Verb, p.Resource) {
			return false
		}
	}
	return true
}

// grants says whether rules allow verb on resource of edgeplane's group.
func grants(rules []rbacv1.PolicyRule, verb, resource string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, edgev1alpha1.GroupVersion.Group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// grantsAggregated says whether rules allow what kube-apiserver checks for
// a route under the aggregated prefix: p on the name every proxied path
// carries, as RBAC matches resource names.
func grantsAggregated(rules []rbacv1.PolicyRule, p apiserver.Permission) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, apiserver.AggregatedGroup) && slices.Contains(r.Resources, p.Resource) && slices.Contains(r.Verbs, p.Verb) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, apiserver.AggregatedName)) {
			return true
		}
	}
	return false
}
