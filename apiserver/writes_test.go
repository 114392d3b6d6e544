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
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/shared/names"
)

func serviceGone(name string) func() bool {
	return func() bool {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: name}, &edgev1alpha1.EdgeService{})
		return apierrors.IsNotFound(err)
	}
}

func templates() []edgev1alpha1.ProvisionTemplate {
	GinkgoHelper()
	list := &edgev1alpha1.ProvisionTemplateList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(facadeNamespace))).To(Succeed())
	return list.Items
}

func entriesIn(folder string) []string {
	GinkgoHelper()
	var out []string
	for _, t := range templates() {
		if string(t.Spec.Path) == folder {
			out = append(out, string(t.Spec.Type)+":"+t.Spec.Name)
		}
	}
	return out
}

var _ = Describe("DELETE /api/v1/service/path", func() {
	It("force-deletes exactly the services at and below the path, stuck ones included", func() {
		n := createNode("del-node", "linux", "amd64")
		stuck := createStatic("del-stuck", "/plant", "app@1#linux", "del-node")
		// The agent keeps reporting the container: without force the
		// finalizer would wait for the (hour-long) deletion timeout.
		report(n, running(instancesOf(stuck.Name)[0], 1, metav1.Now()))
		deep := createStatic("del-deep", "/plant/line-1/cell", "app@1#linux", "del-node")
		createStatic("del-sibling", "/plant-2", "app@1#linux", "del-node")
		createStatic("del-root", "/", "app@1#linux", "del-node")
		Eventually(func() []string { return getService("del-stuck").Finalizers }).Should(ContainElement(edgev1alpha1.FinalizerContainers))
		Eventually(func() []string { return getService("del-deep").Finalizers }).Should(ContainElement(edgev1alpha1.FinalizerContainers))

		for _, s := range []*edgev1alpha1.EdgeService{stuck, deep} {
			Eventually(func() int { return recordTotal(string(s.UID)) }).Should(BeNumerically(">=", 0), "the facade's cache knows the service")
		}
		var items []map[string]any
		r := sendJSON(http.MethodDelete, "/api/v1/service/path", map[string]string{"path": "/plant/"})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&items)
		Expect(items).To(HaveLen(2))
		Expect(items[0]["transactionId"]).To(Equal(items[1]["transactionId"]), "one transaction per request")
		Expect(items[0]["transactionId"]).To(MatchRegexp(`^[0-9a-f-]{36}$`))
		ids := []any{items[0]["provisionId"], items[1]["provisionId"]}
		Expect(ids).To(ConsistOf(string(stuck.UID), string(deep.UID)))
		for _, it := range items {
			Expect(it["result"]).To(Equal("successful"))
			Expect(it["error"]).To(BeNil())
		}
		Eventually(serviceGone("del-stuck")).Should(BeTrue())
		Eventually(serviceGone("del-deep")).Should(BeTrue())
		Consistently(serviceGone("del-sibling"), "1s").Should(BeFalse(), "/plant-2 is not below /plant")
		Expect(serviceGone("del-root")()).To(BeFalse())
	})

	It("spares a service moved out of the path after the cache answered, and deletes one changed but still below it", func() {
		createNode("del-race-node", "linux", "amd64")
		moved := createStatic("del-moved", "/race", "app@1#linux", "del-race-node")
		changed := createStatic("del-changed", "/race/a", "app@1#linux", "del-race-node")
		seenMoved, seenChanged := getService("del-moved"), getService("del-changed")

		By("moving one service out of /race and changing the other, behind the facade's back")
		patch := client.MergeFrom(seenMoved.DeepCopy())
		live := seenMoved.DeepCopy()
		live.Spec.Path = "/elsewhere"
		Expect(k8sClient.Patch(ctx, live, patch)).To(Succeed())
		patch = client.MergeFrom(seenChanged.DeepCopy())
		live = seenChanged.DeepCopy()
		live.Spec.Image.Ref = "app@2#linux"
		Expect(k8sClient.Patch(ctx, live, patch)).To(Succeed())

		By("force-deleting both as the cache saw them")
		err := apiserver.ForceDelete(ctx, k8sClient, seenMoved, "/race")
		Expect(err).To(MatchError(ContainSubstring("moved to /elsewhere while the request ran")))
		Expect(apiserver.ForceDelete(ctx, k8sClient, seenChanged, "/race")).To(Succeed())
		Eventually(serviceGone("del-changed")).Should(BeTrue())
		Consistently(serviceGone("del-moved"), "1s").Should(BeFalse())
		Expect(getService("del-moved").DeletionTimestamp).To(BeNil())
		Expect(moved.UID).NotTo(Equal(changed.UID))
	})

	It("answers [] when nothing lies under the path", func() {
		r := sendJSON(http.MethodDelete, "/api/v1/service/path", map[string]string{"path": "/nothing/here"})
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Data)).To(Equal("[]"))
	})

	DescribeTable("refuses bad input and deletes nothing",
		func(contentType, body string, status int, field string) {
			before := len(serviceNames())
			r := do(http.MethodDelete, baseURL+"/api/v1/service/path", contentType, []byte(body), "")
			Expect(r.Status).To(Equal(status), r.Message)
			if field != "" {
				Expect(r.FieldErrors).To(HaveKey(field))
			}
			Expect(serviceNames()).To(HaveLen(before))
		},
		Entry("a relative path", "application/json", `{"path":"plant"}`, 400, "path"),
		Entry("a .. segment", "application/json", `{"path":"/a/../"}`, 400, "path"),
		Entry("an empty segment", "application/json", `{"path":"/a//b"}`, 400, "path"),
		Entry("a control character", "application/json", `{"path":"/a\u0007"}`, 400, "path"),
		Entry("no path", "application/json", `{}`, 400, "path"),
		Entry("path of the wrong type", "application/json", `{"path":7}`, 400, "path"),
		Entry("not JSON", "application/json", `{"path":`, 400, ""),
		Entry("two objects", "application/json", `{"path":"/"}{"path":"/"}`, 400, ""),
		Entry("no content type", "", `{"path":"/"}`, 415, ""),
		Entry("a text body", "text/plain", `/`, 415, ""),
		Entry("a body over 1 MiB", "application/json", `{"path":"/`+strings.Repeat("a", 1<<20)+`"}`, 413, ""),
		Entry("a body over 1 MiB that is not JSON", "application/json", strings.Repeat("x", 2<<20), 413, ""),
		// encoding/json would take the last of these, or match Path to path.
		Entry("the path key twice", "application/json", `{"path":"/none","path":"/"}`, 400, "path"),
		Entry("the path key in two spellings", "application/json", `{"path":"/none","Path":"/"}`, 400, "Path"),
		Entry("a repeated key deeper down", "application/json", `{"path":"/none","x":[{"a":1,"A":2}]}`, 400, "A"),
	)
})

func serviceNames() []string {
	list := &edgev1alpha1.EdgeServiceList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(facadeNamespace))).To(Succeed())
	out := make([]string, 0, len(list.Items))
	for _, s := range list.Items {
		out = append(out, s.Name)
	}
	return out
}

var _ = Describe("POST /api/v1/provision-template/path-label/folder", func() {
	It("creates the folder and its missing parents, and a retry returns the same folder", func() {
		var res map[string]any
		r := sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "cell-7", "path": "/site/hall/"})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&res)
		Expect(res["path"]).To(Equal("/site/hall/cell-7"))
		f := &edgev1alpha1.ProvisionTemplate{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: names.Template("/site/hall", "cell-7")}, f)).To(Succeed())
		Expect(res["id"]).To(Equal(string(f.UID)))
		Expect(entriesIn("/")).To(ContainElement("folder:site"))
		Expect(entriesIn("/site")).To(Equal([]string{"folder:hall"}))
		Expect(entriesIn("/site/hall")).To(Equal([]string{"folder:cell-7"}))

		for range 2 {
			again := sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "cell-7", "path": "/site/hall"})
			Expect(again.Status).To(Equal(http.StatusOK))
			Expect(again.object()["id"]).To(Equal(string(f.UID)))
		}
		Expect(entriesIn("/site/hall")).To(Equal([]string{"folder:cell-7"}), "retries create nothing more")
	})

	It("refuses a folder where a template of that name exists, and bad names", func() {
		Expect(sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/service/batch",
			map[string]any{"imageRefs": []string{"gate@1#linux"}, "path": "/"}).Status).To(Equal(http.StatusOK))
		r := sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "gate", "path": "/"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(r.Message).To(ContainSubstring("gate"))

		for _, body := range []map[string]string{{"name": "a/b", "path": "/"}, {"name": "..", "path": "/"}, {"name": "", "path": "/"}, {"path": "/"}} {
			r := sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", body)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "%v", body)
			Expect(r.FieldErrors).To(HaveKey("name"))
		}
		r = sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "x"})
		Expect(r.FieldErrors).To(HaveKey("path"))
	})
})

var _ = Describe("POST /api/v1/provision-template/path-label/service/batch", func() {
	const batch = "/api/v1/provision-template/path-label/service/batch"

	BeforeEach(func() {
		Expect(sendJSON(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "images", "path": "/tpl"}).Status).To(Equal(http.StatusOK))
	})

	It("creates one template per image, named after the image", func() {
		var res struct {
			ProvisionTmplList []map[string]string `json:"provisionTmplList"`
		}
		r := sendJSON(http.MethodPost, batch, map[string]any{"imageRefs": []string{"nginx@1.25#linux", "sensor/reader@2.0.1#sylixos"}, "path": "/tpl/images"})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&res)
		Expect(res.ProvisionTmplList).To(HaveLen(2))
		for i, name := range []string{"nginx", "sensor-reader"} {
			t := &edgev1alpha1.ProvisionTemplate{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: names.Template("/tpl/images", name)}, t)).To(Succeed())
			Expect(res.ProvisionTmplList[i]).To(Equal(map[string]string{"id": string(t.UID), "name": name}))
			Expect(t.Spec.Type).To(Equal(edgev1alpha1.TypeTemplate))
		}
		Expect(entriesIn("/tpl/images")).To(ConsistOf("template:nginx", "template:sensor-reader"))

		By("refusing the same batch again with a 409 that lists the names, creating nothing")
		r = sendJSON(http.MethodPost, batch, map[string]any{"imageRefs": []string{"redis@7#linux", "nginx@1.26#linux"}, "path": "/tpl/images"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(r.Message).To(ContainSubstring("nginx"))
		Expect(r.FieldErrors).To(HaveKey("imageRefs[1]"))
		Expect(entriesIn("/tpl/images")).To(ConsistOf("template:nginx", "template:sensor-reader"))
	})

	It("validates every ref first: one bad ref fails the batch and creates nothing", func() {
		r := sendJSON(http.MethodPost, batch, map[string]any{"imageRefs": []string{"ok@1#linux", "Bad Ref", "nover#linux", "ok@2#linux"}, "path": "/tpl/images"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(r.FieldErrors).To(HaveLen(3))
		Expect(r.FieldErrors).To(HaveKey("imageRefs[1]"))
		Expect(r.FieldErrors).To(HaveKey("imageRefs[2]"))
		Expect(r.FieldErrors["imageRefs[3]"]).To(ContainSubstring("imageRefs[0]"), "two refs of one image make one name")
		Expect(entriesIn("/tpl/images")).NotTo(ContainElement("template:ok"))
	})

	It("answers 404 for a missing folder and 400 for missing fields", func() {
		r := sendJSON(http.MethodPost, batch, map[string]any{"imageRefs": []string{"x@1#linux"}, "path": "/no/such/folder"})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		r = sendJSON(http.MethodPost, batch, map[string]any{"path": "/tpl/images"})
		Expect(r.FieldErrors).To(HaveKey("imageRefs"))
		r = sendJSON(http.MethodPost, batch, map[string]any{"imageRefs": []string{}, "path": "/tpl/images"})
		Expect(r.FieldErrors).To(HaveKey("imageRefs"))
		many := make([]string, 1001)
		for i := range many {
			many[i] = "x@1#linux"
		}
		r = sendJSON(http.MethodPost, batch, map[string]any{"imageRefs": many, "path": "/tpl/images"})
		Expect(r.FieldErrors).To(HaveKey("imageRefs"))
		r = do(http.MethodPost, baseURL+batch, "application/json", bytes.Repeat([]byte(" "), 2<<20), "")
		Expect(r.Status).To(Equal(http.StatusRequestEntityTooLarge))
	})
})
