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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

type recordPage struct {
	List     []map[string]any `json:"list"`
	Total    int              `json:"total"`
	PageNum  int              `json:"pageNum"`
	PageSize int              `json:"pageSize"`
}

func recordsOf(id string, kv ...string) recordPage {
	GinkgoHelper()
	var pg recordPage
	r := api("/api/v1/service/record" + query(append([]string{"id", id}, kv...)...))
	Expect(r.Status).To(Equal(http.StatusOK), r.Message)
	r.into(&pg)
	return pg
}

// recordTotal is the number of a service's records, or -1 while the
// facade's cache does not know the service yet.
func recordTotal(id string) int {
	GinkgoHelper()
	r := api("/api/v1/service/record" + query("id", id))
	if r.Status == http.StatusNotFound {
		return -1
	}
	var pg recordPage
	r.into(&pg)
	return pg.Total
}

var _ = Describe("Deployment records", Ordered, func() {
	var svc *edgev1alpha1.EdgeService
	zone := time.FixedZone("UTC+8", 8*3600)

	BeforeAll(func() {
		createNode("rec-a", "linux", "amd64")
		svc = createStatic("rec-svc", "/rec", "shop/api@1#linux", "rec-a")
		Eventually(func() int64 { return getService("rec-svc").Status.Revision }).Should(Equal(int64(1)))
	})

	It("adds a record for an image update and keeps the old one, newest first", func() {
		s := getService("rec-svc")
		patch := client.MergeFrom(s.DeepCopy())
		s.Spec.Image.Ref = "shop/api@2#linux"
		s.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{
			Hostname: "api", Env: []string{"MODE=prod"}, Cmd: []string{"run"}, Restart: "always", Network: "host", Memory: 256 << 20, HealthCmd: []string{"curl", "-f", "localhost"},
		}}
		s.Spec.VSOA = &edgev1alpha1.VSOAConfig{Port: 3000, HealthPath: "/health", HealthIntervalMs: 1000, HealthTimeoutMs: 500, HealthStartDelayMs: 2000,
			PasswordSecretRef: &edgev1alpha1.SecretKeyRef{Name: "vsoa", Key: "password"}}
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		Eventually(func() int { return recordTotal(string(svc.UID)) }).Should(Equal(2))

		pg := recordsOf(string(svc.UID))
		Expect(pg.List[0]["image"]).To(Equal("shop/api@2#linux"))
		Expect(pg.List[1]["image"]).To(Equal("shop/api@1#linux"))
		rec := &edgev1alpha1.DeployRecord{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: "rec-svc-2"}, rec)).To(Succeed())
		node := getNode("rec-a")
		Expect(pg.List[0]).To(Equal(map[string]any{
			"id": string(rec.UID), "name": "rec-svc", "image": "shop/api@2#linux", "cmd": []any{"serve", "--port=80"},
			"createdTime": rec.CreationTimestamp.In(zone).Format("2006-01-02 15:04:05"),
			"nodeList":    []any{map[string]any{"nodeId": string(node.UID), "nodeName": "rec-a", "address": "10.3.0.7:7200"}},
		}))

		By("paging: one per page")
		pg = recordsOf(string(svc.UID), "pageNum", "2", "pageSize", "1")
		Expect(pg.Total).To(Equal(2))
		Expect(pg.List).To(HaveLen(1))
		Expect(pg.List[0]["image"]).To(Equal("shop/api@1#linux"))
	})

	It("gives the detail of a record with every field of its snapshot, and no password", func() {
		rec := &edgev1alpha1.DeployRecord{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: "rec-svc-2"}, rec)).To(Succeed())
		r := api("/api/v1/service/record/" + string(rec.UID))
		Expect(r.Status).To(Equal(http.StatusOK))
		node := getNode("rec-a")
		Expect(r.object()).To(Equal(map[string]any{
			"id": string(rec.UID), "action": "run", "cmd": []any{"serve", "--port=80"}, "name": "rec-svc",
			"config": map[string]any{"hostname": "api", "name": "", "env": []any{"MODE=prod"}, "cmd": []any{"run"}, "restart": "always",
				"network": "host", "memory": float64(256 << 20), "healthCmd": []any{"curl", "-f", "localhost"}},
			"vsoa":     map[string]any{"port": 3000.0, "healthPath": "/health", "healthIntervalMs": 1000.0, "healthTimeoutMs": 500.0, "healthStartDelayMs": 2000.0},
			"nodeList": []any{map[string]any{"nodeId": string(node.UID), "nodeName": "rec-a", "address": "10.3.0.7:7200"}},
			"image": map[string]any{"id": "shop/api@2#linux", "ref": "shop/api@2#linux", "path": "registry.local/rec-svc",
				"pullPolicy": "IfNotPresent", "autoUpgrade": "Never"},
			"createdTime": rec.CreationTimestamp.In(zone).Format("2006-01-02 15:04:05"),
			"policy":      "static", "factor": 1.0,
		}))
	})

	It("says how many nodes a record of a service on many nodes leaves out", func() {
		// As the manager cuts a record's nodes to what etcd stores beside
		// the largest configuration.
		rec := &edgev1alpha1.DeployRecord{}
		rec.Namespace, rec.Name = facadeNamespace, "rec-wide-1"
		rec.Spec = edgev1alpha1.DeployRecordSpec{ServiceName: "rec-wide", Revision: 1,
			DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "shop/api@1#linux"}},
			Nodes:      []edgev1alpha1.RecordNode{{NodeName: "edge-0001"}, {NodeName: "edge-0002"}}, NodesOmitted: 4998}
		Expect(k8sClient.Create(ctx, rec)).To(Succeed())
		var r reply
		Eventually(func() int {
			r = api("/api/v1/service/record/" + string(rec.UID))
			return r.Status
		}).Should(Equal(http.StatusOK))
		Expect(r.object()).To(And(
			HaveKeyWithValue("nodeList", HaveLen(2)),
			HaveKeyWithValue("nodesOmitted", 4998.0),
			HaveKeyWithValue("factor", 5000.0), // a static service's: every node it lists
		))
	})

	It("answers 404 for unknown ids and 400 without a service id", func() {
		Expect(api("/api/v1/service/record/nope").Status).To(Equal(http.StatusNotFound))
		Expect(api("/api/v1/service/record" + query("id", "nope")).Status).To(Equal(http.StatusNotFound))
		r := api("/api/v1/service/record")
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(r.FieldErrors).To(HaveKey("id"))
	})

	It("records a scale of a dynamic service, with its factor", func() {
		d := &edgev1alpha1.EdgeService{}
		d.Namespace, d.Name = facadeNamespace, "rec-dyn"
		d.Spec = edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "shop/api@1#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](1)}}
		Expect(k8sClient.Create(ctx, d)).To(Succeed())
		Eventually(func() int { return recordTotal(string(d.UID)) }).Should(Equal(1))
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Factor = ptr.To[int32](2)
		Expect(k8sClient.Patch(ctx, d, patch)).To(Succeed())
		Eventually(func() int { return recordTotal(string(d.UID)) }).Should(Equal(2))
		newest := recordsOf(string(d.UID)).List[0]["id"].(string)
		detail := api("/api/v1/service/record/" + newest).object()
		Expect(detail["policy"]).To(Equal("dynamic"))
		Expect(detail["factor"]).To(BeNumerically("==", 2))
	})
})
