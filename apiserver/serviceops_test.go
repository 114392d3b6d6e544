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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/shared/names"
)

// service is an item of GET /api/v1/service, as a client reads it.
type service struct {
	ID, Name, Path, Policy, Image, ImageVersion, Strategy, Health, Reason, Message string
	Revision, DeployedRevision                                                     int64
	Total, Ready, Updated, Failed                                                  int32
	Paused                                                                         bool
}

// waitRevision waits for the manager to record a service's revision rev.
func waitRevision(name string, rev int64) *edgev1alpha1.EdgeService {
	GinkgoHelper()
	Eventually(func() int64 { return getService(name).Status.Revision }).Should(Equal(rev))
	return getService(name)
}

// recordUID is the id the facade gives a service's record of revision rev.
func recordUID(svc string, rev int64) string {
	GinkgoHelper()
	rec := &edgev1alpha1.DeployRecord{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: names.DeployRecord(svc, rev)}, rec)).To(Succeed())
	return string(rec.UID)
}

func recordCount(svc string) int {
	GinkgoHelper()
	list := &edgev1alpha1.DeployRecordList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(facadeNamespace))).To(Succeed())
	n := 0
	for _, r := range list.Items {
		if r.Spec.ServiceName == svc {
			n++
		}
	}
	return n
}

// known waits for the facade's cache to hold a service.
func known(svc *edgev1alpha1.EdgeService) {
	GinkgoHelper()
	Eventually(func() int { return recordTotal(string(svc.UID)) }).Should(BeNumerically(">=", 1))
}

var _ = Describe("The facade's service operations", func() {
	It("lists services with their rollout's health, paged and searched by name", func() {
		n := createNode("ops-list-node", "linux", "amd64")
		a := createStatic("ops-list-a", "/ops", "app@1.0#linux", "ops-list-node")
		createStatic("ops-list-b", "/ops", "app@2.0#linux", "ops-list-node")
		report(n, running(instancesOf("ops-list-a")[0], 1, metav1.Now()))

		var page struct {
			List                     []service
			Total, PageNum, PageSize int
		}
		Eventually(func() int {
			r := api("/api/v1/service" + query("name", "OPS-LIST", "pageSize", "1", "pageNum", "1"))
			Expect(r.Status).To(Equal(http.StatusOK), r.Message)
			r.into(&page)
			return page.Total
		}).Should(Equal(2), "a case-insensitive substring of the name")
		Expect(page.List).To(HaveLen(1))
		Expect(page.List[0].ID).To(Equal(string(a.UID)), "the older first")

		Eventually(func() service {
			r := api("/api/v1/service" + query("name", "ops-list-a"))
			r.into(&page)
			return page.List[0]
		}).Should(And(HaveField("Health", "ready"), HaveField("Ready", int32(1)), HaveField("Total", int32(1)), HaveField("Revision", int64(1))))
		Expect(page.List[0]).To(And(HaveField("Image", "app@1.0#linux"), HaveField("ImageVersion", "1.0"), HaveField("Policy", "static"),
			HaveField("Strategy", "AllAtOnce"), HaveField("Path", "/ops"), HaveField("Updated", int32(1))))

		r := api("/api/v1/service" + query("name", "ops-list", "pageSize", "1", "pageNum", "2"))
		r.into(&page)
		Expect(page.List).To(HaveLen(1))
		Expect(page.List[0].Name).To(Equal("ops-list-b"))
		Expect(page.List[0].Health).To(Equal("progressing"), "its instance was never reported")

		r = api("/api/v1/service" + query("pageSize", "0"))
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(r.FieldErrors).To(HaveKey("pageSize"))
	})

	It("rolls a service back to one of its records, recorded once, and refuses what it cannot do", func() {
		createNode("ops-back-node", "linux", "amd64")
		svc := createStatic("ops-back", "/ops", "app@1.0#linux", "ops-back-node")
		svc = waitRevision("ops-back", 1)
		patch := client.MergeFrom(svc.DeepCopy())
		svc.Spec.Image.Ref, svc.Spec.Cmd = "app@2.0#linux", nil
		Expect(k8sClient.Patch(ctx, svc, patch)).To(Succeed())
		svc = waitRevision("ops-back", 2)
		other := createStatic("ops-back-other", "/ops", "app@1.0#linux", "ops-back-node")
		waitRevision("ops-back-other", 1)
		known(svc)

		By("refusing, and writing nothing")
		gen := svc.Generation
		r := sendJSON(http.MethodPost, "/api/v1/service/"+string(svc.UID)+"/rollback", map[string]any{})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(r.FieldErrors).To(HaveKey("recordId"))
		r = sendJSON(http.MethodPost, "/api/v1/service/"+string(svc.UID)+"/rollback", map[string]string{"recordId": "no-such-record"})
		Expect(r.Status).To(Equal(http.StatusNotFound), r.Message)
		r = sendJSON(http.MethodPost, "/api/v1/service/"+string(svc.UID)+"/rollback", map[string]string{"recordId": recordUID("ops-back-other", 1)})
		Expect(r.Status).To(Equal(http.StatusConflict), r.Message)
		Expect(r.Message).To(ContainSubstring("not a record of service ops-back"))
		r = sendJSON(http.MethodPost, "/api/v1/service/no-such-service/rollback", map[string]string{"recordId": recordUID("ops-back", 1)})
		Expect(r.Status).To(Equal(http.StatusNotFound), r.Message)
		Expect(getService("ops-back").Generation).To(Equal(gen))
		Expect(getService("ops-back-other").Generation).To(Equal(other.Generation))

		By("rolling back to revision 1")
		var res struct {
			Service    service
			ToRevision int64
			Changed    bool
		}
		r = sendJSON(http.MethodPost, "/api/v1/service/"+string(svc.UID)+"/rollback", map[string]string{"recordId": recordUID("ops-back", 1)})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&res)
		Expect(res.ToRevision).To(Equal(int64(1)))
		Expect(res.Changed).To(BeTrue())
		Expect(res.Service.Image).To(Equal("app@1.0#linux"))
		back := waitRevision("ops-back", 3)
		Expect(back.Spec.Cmd).To(Equal([]string{"serve", "--port=80"}), "what revision 2 dropped is back")
		Expect(back.ManagedFields).To(ContainElement(HaveField("Manager", apiserver.FieldManager)))
		Consistently(func() int { return recordCount("ops-back") }, "1s").Should(Equal(3), "one record for the rollback")

		By("saying so when the service already has that configuration")
		r = sendJSON(http.MethodPost, "/api/v1/service/"+string(svc.UID)+"/rollback", map[string]string{"recordId": recordUID("ops-back", 1)})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&res)
		Expect(res.Changed).To(BeFalse())
		Expect(getService("ops-back").Generation).To(Equal(back.Generation))
	})

	It("scales a dynamic service and changes an image version, with fieldErrors for what cannot be", func() {
		createNode("ops-patch-node", "linux", "amd64")
		dyn := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: "ops-patch"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"},
				Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](1)}}}
		Expect(k8sClient.Create(ctx, dyn)).To(Succeed())
		dyn = waitRevision("ops-patch", 1)
		static := createStatic("ops-patch-static", "/ops", "app@1.0#linux", "ops-patch-node")
		known(dyn)
		known(static)
		path := "/api/v1/service/" + string(dyn.UID)

		By("refusing, and writing nothing")
		for _, tc := range []struct {
			path   string
			body   map[string]any
			status int
			field  string
		}{
			{path, map[string]any{}, http.StatusBadRequest, "factor"},
			{path, map[string]any{"factor": 0}, http.StatusBadRequest, "factor"},
			{path, map[string]any{"factor": 10001}, http.StatusBadRequest, "factor"},
			{path, map[string]any{"factor": "3"}, http.StatusBadRequest, "factor"},
			{path, map[string]any{"imageVersion": "2.0#sylixos"}, http.StatusBadRequest, "imageVersion"},
			{path, map[string]any{"imageVersion": ""}, http.StatusBadRequest, "imageVersion"},
			{"/api/v1/service/" + string(static.UID), map[string]any{"factor": 2}, http.StatusBadRequest, "factor"},
			{"/api/v1/service/no-such-service", map[string]any{"factor": 2}, http.StatusNotFound, ""},
		} {
			r := sendJSON(http.MethodPatch, tc.path, tc.body)
			Expect(r.Status).To(Equal(tc.status), "%v: %s", tc.body, r.Message)
			if tc.field != "" {
				Expect(r.FieldErrors).To(HaveKey(tc.field), "%v", tc.body)
			}
		}
		Expect(getService("ops-patch").Generation).To(Equal(dyn.Generation))

		By("scaling and changing the image version in one write")
		var item service
		r := sendJSON(http.MethodPatch, path, map[string]any{"factor": 3, "imageVersion": "2.0"})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&item)
		Expect(item.Image).To(Equal("app@2.0#linux"))
		got := waitRevision("ops-patch", 2)
		Expect(got.Spec.Factor).To(Equal(ptr.To[int32](3)))
		Expect(got.Spec.Image.Ref).To(BeEquivalentTo("app@2.0#linux"))
		Expect(got.ManagedFields).To(ContainElement(HaveField("Manager", apiserver.FieldManager)))
		Consistently(func() int { return recordCount("ops-patch") }, "1s").Should(Equal(2), "one change, one record")

		By("writing nothing when nothing changes")
		r = sendJSON(http.MethodPatch, path, map[string]any{"factor": 3})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		Expect(getService("ops-patch").Generation).To(Equal(got.Generation))
	})

	It("creates a service from a template, and refuses what it cannot make", func() {
		tmpl := &edgev1alpha1.ProvisionTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: names.Template("/", "ops-tmpl")},
			Spec: edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeTemplate, Name: "ops-tmpl", Path: "/", ImageRef: "gateway@1.4#linux",
				Defaults: &edgev1alpha1.ServiceDefaults{Cmd: []string{"run"}}},
		}
		Expect(k8sClient.Create(ctx, tmpl)).To(Succeed())
		folder := &edgev1alpha1.ProvisionTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: names.Template("/", "ops-folder")},
			Spec:       edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeFolder, Name: "ops-folder", Path: "/"},
		}
		Expect(k8sClient.Create(ctx, folder)).To(Succeed())
		// Once the facade's cache holds the folder (created after the template).
		Eventually(func() int {
			return sendJSON(http.MethodPost, "/api/v1/service", map[string]any{"templateId": string(folder.UID), "factor": 1}).Status
		}).Should(Equal(http.StatusBadRequest))

		By("refusing, and creating nothing")
		for _, tc := range []struct {
			body   map[string]any
			status int
			field  string
		}{
			{map[string]any{"factor": 1}, http.StatusBadRequest, "templateId"},
			{map[string]any{"templateId": string(tmpl.UID)}, http.StatusBadRequest, "nodes"},
			{map[string]any{"templateId": string(tmpl.UID), "factor": 1, "nodes": []string{"a"}}, http.StatusBadRequest, "factor"},
			{map[string]any{"templateId": string(tmpl.UID), "factor": 0}, http.StatusBadRequest, "factor"},
			{map[string]any{"templateId": string(tmpl.UID), "nodes": []string{"Not_A_Node"}}, http.StatusBadRequest, "nodes[0]"},
			{map[string]any{"templateId": string(tmpl.UID), "factor": 1, "name": "Bad_Name"}, http.StatusBadRequest, "name"},
			{map[string]any{"templateId": string(folder.UID), "factor": 1}, http.StatusBadRequest, "templateId"},
			{map[string]any{"templateId": "no-such-template", "factor": 1}, http.StatusNotFound, ""},
		} {
			r := sendJSON(http.MethodPost, "/api/v1/service", tc.body)
			Expect(r.Status).To(Equal(tc.status), "%v: %s", tc.body, r.Message)
			if tc.field != "" {
				Expect(r.FieldErrors).To(HaveKey(tc.field), "%v", tc.body)
			}
		}
		Expect(serviceGone("ops-tmpl")()).To(BeTrue())

		By("creating it, named after the template")
		var item service
		r := sendJSON(http.MethodPost, "/api/v1/service", map[string]any{"templateId": string(tmpl.UID), "factor": 2})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		r.into(&item)
		Expect(item).To(And(HaveField("Name", "ops-tmpl"), HaveField("Policy", "dynamic"), HaveField("Image", "gateway@1.4#linux")))
		svc := getService("ops-tmpl")
		Expect(svc.Spec.Factor).To(Equal(ptr.To[int32](2)))
		Expect(svc.Spec.Cmd).To(Equal([]string{"run"}), "the template's defaults")
		Expect(svc.ManagedFields).To(ContainElement(HaveField("Manager", apiserver.FieldManager)))

		r = sendJSON(http.MethodPost, "/api/v1/service", map[string]any{"templateId": string(tmpl.UID), "factor": 2})
		Expect(r.Status).To(Equal(http.StatusConflict), r.Message)
		Expect(r.FieldErrors).To(HaveKey("name"))
		r = sendJSON(http.MethodPost, "/api/v1/service", map[string]any{"templateId": string(tmpl.UID), "nodes": []string{"edge-a"}, "name": "ops-tmpl-static"})
		Expect(r.Status).To(Equal(http.StatusOK), r.Message)
		Expect(getService("ops-tmpl-static").Spec.Nodes).To(Equal([]string{"edge-a"}))
	})
})
