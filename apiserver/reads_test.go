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
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The reads edgeplane adds to the contract: a folder's entries, the
// services a delete by path would remove, and a node's runtime.

type treeEntry struct {
	ID, Name, Type, Path, CreatedTime string
	ImageRef                          *string
	Children                          *int
}

func folder(path string, kv ...string) (reply, []treeEntry, int) {
	GinkgoHelper()
	r := api("/api/v1/provision-template/path-label" + query(append([]string{"path", path}, kv...)...))
	var page struct {
		List  []treeEntry
		Total int
	}
	if r.Status == http.StatusOK {
		r.into(&page)
	}
	return r, page.List, page.Total
}

var _ = Describe("GET /api/v1/provision-template/path-label", func() {
	It("lists one folder's entries, folders first and then by name, with paging", func() {
		for _, name := range []string{"zeta", "alpha"} {
			Expect(sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": name, "path": "/tree"}).Status).To(Equal(http.StatusOK))
		}
		Expect(sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "deep", "path": "/tree/alpha"}).Status).To(Equal(http.StatusOK))
		r := sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/service/batch", map[string]any{"imageRefs": []string{"mqtt@2#linux", "brain@1#sylixos"}, "path": "/tree"})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		var created struct{ ProvisionTmplList []struct{ ID, Name string } }
		r.into(&created)

		var list []treeEntry
		Eventually(func() []string {
			_, list, _ = folder("/tree", "pageSize", "-1")
			var out []string
			for _, e := range list {
				out = append(out, e.Type+":"+e.Name)
			}
			return out
		}).Should(Equal([]string{"folder:alpha", "folder:zeta", "template:brain", "template:mqtt"}))
		Expect(list[0].Path).To(Equal("/tree/alpha"))
		Expect(list[0].ImageRef).To(BeNil())
		Expect(*list[2].ImageRef).To(Equal("brain@1#sylixos"))
		Expect(list[2].Children).To(BeNil())
		Expect(list[2].ID).To(Equal(created.ProvisionTmplList[1].ID))
		Expect(list[3].CreatedTime).To(MatchRegexp(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`))
		Eventually(func() int {
			_, l, _ := folder("/tree")
			return *l[0].Children
		}).Should(Equal(1), "alpha holds deep, as the operator counts")

		By("a folder's own path lists what is in it")
		_, deep, _ := folder(list[0].Path)
		Expect(deep).To(HaveLen(1))
		Expect(deep[0].Path).To(Equal("/tree/alpha/deep"))

		By("paging as every list of the contract does")
		_, second, total := folder("/tree/", "pageNum", "2", "pageSize", "3")
		Expect(total).To(Equal(4))
		Expect(second).To(HaveLen(1))
		Expect(second[0].Name).To(Equal("mqtt"))

		By("the root, when no path is given")
		r = api("/api/v1/provision-template/path-label")
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Data)).To(ContainSubstring(`"path":"/tree"`))
	})

	It("answers 404 for a folder that is not there, or is a template, and 400 for a bad path", func() {
		Expect(sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/service/batch", map[string]any{"imageRefs": []string{"leaf@1#linux"}, "path": "/"}).Status).To(Equal(http.StatusOK))
		r, _, _ := folder("/no/such")
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(r.Message).To(ContainSubstring("/no/such"))
		r, _, _ = folder("/leaf")
		Expect(r.Status).To(Equal(http.StatusNotFound), "a template is not a folder")
		for _, bad := range []string{"relative", "/a/../b", "/a//b"} {
			r, _, _ = folder(bad)
			Expect(r.Status).To(Equal(http.StatusBadRequest), bad)
			Expect(r.FieldErrors).To(HaveKey("path"))
		}
		r, _, _ = folder("/", "pageSize", "0")
		Expect(r.FieldErrors).To(HaveKey("pageSize"))
	})
})

var _ = Describe("GET /api/v1/service/path", func() {
	under := func(path string) []map[string]any {
		GinkgoHelper()
		r := api("/api/v1/service/path" + query("path", path, "pageSize", "-1"))
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		var page struct{ List []map[string]any }
		r.into(&page)
		return page.List
	}
	ids := func(items []map[string]any, key string) []any {
		out := []any{}
		for _, it := range items {
			out = append(out, it[key])
		}
		return out
	}

	It("lists exactly what the delete of that path then removes", func() {
		createNode("pre-node", "linux", "amd64")
		a := createStatic("pre-a", "/pre", "app@1#linux", "pre-node")
		b := createStatic("pre-b", "/pre/line", "app@1#linux", "pre-node")
		createStatic("pre-other", "/pre-2", "app@1#linux", "pre-node")
		var listed []map[string]any
		Eventually(func() int { listed = under("/pre"); return len(listed) }).Should(Equal(2))
		Expect(listed[0]).To(Equal(map[string]any{"provisionId": string(a.UID), "name": "pre-a", "path": "/pre", "terminating": false}))
		Expect(listed[1]["path"]).To(Equal("/pre/line"))

		r := sendJSON(http.MethodDelete, "/api/v1/service/path", map[string]any{"path": "/pre", "provisionIds": ids(listed, "provisionId")})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		var deleted []map[string]any
		r.into(&deleted)
		Expect(ids(deleted, "provisionId")).To(Equal([]any{string(a.UID), string(b.UID)}), "the same services, in the same order")
		Eventually(serviceGone("pre-a")).Should(BeTrue())
		Eventually(serviceGone("pre-b")).Should(BeTrue())
		Expect(serviceGone("pre-other")()).To(BeFalse())
		Eventually(func() []map[string]any { return under("/pre") }).Should(BeEmpty())
	})

	It("deletes nothing when the services under the path are not the ones confirmed", func() {
		createNode("conf-node", "linux", "amd64")
		a := createStatic("conf-a", "/conf", "app@1#linux", "conf-node")
		Eventually(func() int { return len(under("/conf")) }).Should(Equal(1))
		createStatic("conf-late", "/conf/new", "app@1#linux", "conf-node")
		Eventually(func() int { return len(under("/conf")) }).Should(Equal(2))

		for _, expect := range [][]string{{string(a.UID)}, {string(a.UID), "gone-id", "x"}, {}} {
			r := sendJSON(http.MethodDelete, "/api/v1/service/path", map[string]any{"path": "/conf", "provisionIds": expect})
			Expect(r.Status).To(Equal(http.StatusConflict), "%v", expect)
			Expect(r.FieldErrors).To(HaveKey("provisionIds"))
		}
		r := sendJSON(http.MethodDelete, "/api/v1/service/path", map[string]any{"path": "/conf", "provisionIds": []string{string(a.UID), ""}})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(r.FieldErrors).To(HaveKey("provisionIds[1]"))
		Consistently(func() bool { return serviceGone("conf-a")() || serviceGone("conf-late")() }, "1s").Should(BeFalse())
		Expect(getService("conf-a").DeletionTimestamp).To(BeNil())
	})

	It("needs a well-formed path, and the route still refuses other methods", func() {
		for _, q := range []string{"", "?path=", query("path", "rel"), query("path", "/a/./b"), "?path=/a&path=/b"} {
			r := api("/api/v1/service/path" + q)
			Expect(r.Status).To(Equal(http.StatusBadRequest), q)
			Expect(r.FieldErrors).To(HaveKey("path"))
		}
		r := do(http.MethodPut, baseURL+"/api/v1/service/path", "application/json", []byte(`{"path":"/"}`), "")
		Expect(r.Status).To(Equal(http.StatusMethodNotAllowed))
		Expect(r.Message).To(ContainSubstring("GET, HEAD, DELETE"))
	})
})

var _ = Describe("runtimeReady in the node list", func() {
	It("says what the agent's engine probe says, null before it does, and is absent from basic items", func() {
		n := createNode("rt-node", "linux", "arm64")
		item := func(basic string) map[string]any {
			GinkgoHelper()
			r := api("/api/v1/node" + query("name", "rt-node", "basicInfo", basic))
			var page struct{ List []map[string]any }
			r.into(&page)
			Expect(page.List).To(HaveLen(1))
			return page.List[0]
		}
		Expect(item("false")).To(HaveKeyWithValue("runtimeReady", BeNil()))
		Expect(item("true")).NotTo(HaveKey("runtimeReady"))
		info := edgev1alpha1.NodeInfo{Type: "linux", Arch: "arm64", AgentVersion: "test"}
		for _, st := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionTrue} {
			cond := &metav1.Condition{Type: edgev1alpha1.ConditionRuntimeReady, Status: st, Reason: "Probe", Message: "probed", LastTransitionTime: metav1.Now()}
			Expect(testenv.ReportRuntime(ctx, k8sClient, n.Name, info, &bootTime, cond)).To(Succeed())
			Eventually(func() any { return item("false")["runtimeReady"] }).Should(Equal(st == metav1.ConditionTrue))
		}
	})
})
