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
	. "github.com/onsi/gomega/gstruct"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

type containerPage struct {
	List     []map[string]any `json:"list"`
	Total    int              `json:"total"`
	PageNum  int              `json:"pageNum"`
	PageSize int              `json:"pageSize"`
}

func taskIDs(pg containerPage) []string {
	out := make([]string, 0, len(pg.List))
	for _, c := range pg.List {
		out = append(out, c["taskId"].(string))
	}
	return out
}

var _ = Describe("Containers", Ordered, func() {
	var (
		linux, rtos *edgev1alpha1.EdgeNode
		web, plc    *edgev1alpha1.EdgeService
		started     = metav1.NewTime(time.Now().Add(-90 * time.Second).Truncate(time.Second))
	)

	BeforeAll(func() {
		linux = createNode("ct-linux", "linux", "amd64")
		rtos = createNode("ct-rtos", "sylixos", "arm64")
		createNode("ct-linux2", "linux", "amd64")
		web = createStatic("web", "/ct", "shop/web@1.2#linux", "ct-linux", "ct-linux2")
		plc = createStatic("plc", "/ct", "plc@3#sylixos", "ct-rtos")
	})

	instanceOn := func(s *edgev1alpha1.EdgeService, node string) edgev1alpha1.ServiceInstance {
		for _, in := range instancesOf(s.Name) {
			if in.NodeName == node {
				return in
			}
		}
		Fail("no instance of " + s.Name + " on " + node)
		return edgev1alpha1.ServiceInstance{}
	}

	It("shows a container deploying, then succeeding once the agent reports it running, with every field", func() {
		inst := instanceOn(web, "ct-linux")
		var c map[string]any
		// The facade's cache may trail the API server by a moment.
		Eventually(func() int { return api("/api/v1/container/" + inst.TaskID).Status }).Should(Equal(http.StatusOK))
		api("/api/v1/container/" + inst.TaskID).into(&c)
		Expect(c["deployStatus"]).To(Equal("deploying"))
		Expect(c["status"]).To(BeNil(), "unknown until the agent reports")
		Expect(c["uptime"]).To(BeNumerically("==", 0))

		By("carrying, beyond the contract, how far the pull it waits on has come")
		report(linux, edgev1alpha1.ObservedContainer{Name: inst.Name, TaskID: inst.TaskID, Revision: 1,
			ImagePull: &edgev1alpha1.ImagePull{Image: "registry.local/shop/web:1.2", BytesDone: 3 << 20, BytesTotal: 8 << 20}})
		Eventually(func() any { api("/api/v1/container/" + inst.TaskID).into(&c); return c["imagePull"] }).Should(Equal(map[string]any{
			"image": "registry.local/shop/web:1.2", "queued": false, "bytesDone": float64(3 << 20), "bytesTotal": float64(8 << 20)}))
		Expect(c["deployStatus"]).To(Equal("deploying"))
		Expect(c["id"]).To(BeEmpty(), "no container yet")

		obs := running(inst, 1, started)
		report(linux, obs, edgev1alpha1.ObservedContainer{Name: "unmanaged", ID: "rt-x", State: edgev1alpha1.ContainerExited})
		Eventually(func() any { api("/api/v1/container/" + inst.TaskID).into(&c); return c["deployStatus"] }).Should(Equal("success"))

		svc, node := getService("web"), getNode("ct-linux")
		inst = instanceOn(web, "ct-linux")
		Expect(c).To(HaveLen(31), "every Container field of the contract, and edgeplane's imagePull and revision: %v", c)
		Expect(c).To(MatchKeys(0, Keys{
			"id": Equal(obs.ID), "taskId": Equal(inst.TaskID), "name": Equal(inst.Name), "status": Equal("running"),
			"uptime":          BeNumerically("~", time.Since(started.Time).Seconds(), 5),
			"startedTime":     Equal(started.UTC().Format(time.RFC3339)),
			"createdTime":     Equal(started.UTC().Format(time.RFC3339)),
			"taskCreatedTime": BeNumerically("==", inst.TaskCreatedTime.UnixMilli()),
			"deployStatus":    Equal("success"), "failedMessage": BeNil(),
			"restartCnt": BeNumerically("==", 2), "deployNum": BeNumerically("==", 1),
			"cpuUsage":    Equal(map[string]any{"total": 12.5, "cores": []any{10.0, 15.0}}),
			"memoryLimit": BeNumerically("==", 512<<20), "memoryUsage": BeNumerically("==", 100<<20), "memoryMaxUsage": BeNumerically("==", 200<<20),
			"sizeUsage": BeNumerically("==", 30<<20), "sizeLimit": BeNumerically("==", 1<<30),
			"serviceId": Equal(string(svc.UID)), "serviceName": Equal("web"),
			"nodeId": Equal(string(node.UID)), "address": Equal("10.3.0.7:7200"), "nodeName": Equal("ct-linux"), "nodeArch": Equal("amd64"),
			"imageId": Equal("sha256:abc"), "imageName": Equal("shop/web"), "imageVersion": Equal("1.2"), "imageOS": Equal("linux"), "imageArch": Equal("arm64"),
			"imagePull": BeNil(), "revision": BeNumerically("==", 1),
		}))
	})

	It("reports a failed deployment with its message, and the name as id on the embedded OS", func() {
		inst := instanceOn(plc, "ct-rtos")
		report(rtos, edgev1alpha1.ObservedContainer{Name: inst.Name, TaskID: inst.TaskID, Revision: 1, FailedMessage: "image plc@3 not found"})
		var c map[string]any
		Eventually(func() any { api("/api/v1/container/" + inst.TaskID).into(&c); return c["deployStatus"] }).Should(Equal("failure"))
		Expect(c["failedMessage"]).To(Equal("image plc@3 not found"))
		Expect(c["id"]).To(Equal(inst.Name))
		Expect(c["nodeArch"]).To(Equal("arm64"))
	})

	It("answers 404 for an unknown taskId", func() {
		r := api("/api/v1/container/no-such-task")
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(r.Message).To(ContainSubstring("no-such-task"))
	})

	It("lists the containers of services, newest task first, with both forms of serviceIds", func() {
		var pg containerPage
		api("/api/v1/container/service" + query("serviceIds[]", string(web.UID), "serviceIds[]", string(plc.UID), "pageNum", "1", "pageSize", "10")).into(&pg)
		Expect(pg.Total).To(Equal(3))
		all := append(instancesOf("web"), instancesOf("plc")...)
		Expect(taskIDs(pg)).To(Equal(newestFirst(all)))

		api("/api/v1/container/service" + query("serviceIds", string(plc.UID), "pageNum", "1", "pageSize", "10")).into(&pg)
		Expect(taskIDs(pg)).To(Equal([]string{instanceOn(plc, "ct-rtos").TaskID}))

		By("matching nothing for unknown ids")
		api("/api/v1/container/service" + query("serviceIds[]", "nope", "pageNum", "1", "pageSize", "10")).into(&pg)
		Expect(pg.Total).To(BeZero())
		Expect(pg.List).To(BeEmpty())

		By("paging: a page of one, and a page past the end")
		api("/api/v1/container/service" + query("serviceIds[]", string(web.UID), "serviceIds[]", string(plc.UID), "pageNum", "2", "pageSize", "1")).into(&pg)
		Expect(pg.Total).To(Equal(3))
		Expect(taskIDs(pg)).To(Equal(newestFirst(all)[1:2]))
		api("/api/v1/container/service" + query("serviceIds[]", string(web.UID), "pageNum", "3", "pageSize", "1")).into(&pg)
		Expect(pg.List).To(BeEmpty())
		Expect(pg.Total).To(Equal(2))
	})

	It("lists the containers of nodes, filtered by key", func() {
		var pg containerPage
		api("/api/v1/container/node" + query("nodeIds[]", string(linux.UID), "pageNum", "1", "pageSize", "-1")).into(&pg)
		Expect(taskIDs(pg)).To(ConsistOf(instanceOn(web, "ct-linux").TaskID), "only what runs on that node")

		both := query("nodeIds[]", string(rtos.UID), "nodeIds[]", string(linux.UID), "pageNum", "1", "pageSize", "10")
		for key, want := range map[string][]string{
			"PLC":      {instanceOn(plc, "ct-rtos").TaskID},  // service name, any case
			"ct-LINUX": {instanceOn(web, "ct-linux").TaskID}, // node name
			"running":  {instanceOn(web, "ct-linux").TaskID}, // runtime status, exactly
			"failure":  {instanceOn(plc, "ct-rtos").TaskID},  // deploy status, exactly
			"web-":     {instanceOn(web, "ct-linux").TaskID}, // container name
			"nothing":  {},
		} {
			api("/api/v1/container/node" + both + "&key=" + key).into(&pg)
			Expect(taskIDs(pg)).To(ConsistOf(want), "key %q", key)
			Expect(pg.Total).To(Equal(len(want)))
		}
	})

	DescribeTable("refuses a list without ids, or with bad paging",
		func(path, field string) {
			r := api(path)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(r.FieldErrors).To(HaveKey(field))
		},
		Entry("no serviceIds", "/api/v1/container/service"+query("pageNum", "1", "pageSize", "10"), "serviceIds"),
		Entry("no nodeIds", "/api/v1/container/node"+query("pageNum", "1", "pageSize", "10"), "nodeIds"),
		Entry("an empty id", "/api/v1/container/node"+query("nodeIds[]", ""), "nodeIds[0]"),
		Entry("pageSize too large", "/api/v1/container/service"+query("serviceIds[]", "x", "pageSize", "5000"), "pageSize"),
	)
})

// newestFirst orders instances as the facade must: taskCreatedTime newest
// first, then taskId.
func newestFirst(in []edgev1alpha1.ServiceInstance) []string {
	s := append([]edgev1alpha1.ServiceInstance(nil), in...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0; j-- {
			a, b := s[j-1], s[j]
			if b.TaskCreatedTime.Before(&a.TaskCreatedTime) || a.TaskCreatedTime.Equal(&b.TaskCreatedTime) && a.TaskID < b.TaskID {
				break
			}
			s[j-1], s[j] = b, a
		}
	}
	out := make([]string, 0, len(s))
	for _, i := range s {
		out = append(out, i.TaskID)
	}
	return out
}
