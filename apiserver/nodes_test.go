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

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

type nodePage struct {
	List     []map[string]any `json:"list"`
	Total    int              `json:"total"`
	PageNum  int              `json:"pageNum"`
	PageSize int              `json:"pageSize"`
}

var _ = Describe("GET /api/v1/node", Ordered, func() {
	var nodes []*edgev1alpha1.EdgeNode

	BeforeAll(func() {
		// 12 nodes named so that creation order and name order differ in
		// the same second: order is creation time, then name.
		for _, name := range []string{"nl-b", "nl-a", "nl-c", "nl-e", "nl-d", "nl-f", "nl-g", "nl-h", "nl-i", "nl-j", "nl-k", "NL-Upper"} {
			osType, arch := "linux", "amd64"
			if len(nodes)%3 == 2 {
				osType, arch = "sylixos", "arm64"
			}
			nodes = append(nodes, createNode(lower(name), osType, arch))
		}
	})

	It("returns every field of a node, with what the controller and the agent wrote", func() {
		var pg nodePage
		r := api("/api/v1/node" + query("name", "nl-a"))
		Expect(r.Status).To(Equal(http.StatusOK))
		r.into(&pg)
		Expect(pg.Total).To(Equal(1))
		n := getNode("nl-a")
		item := pg.List[0]
		Expect(item).To(HaveLen(16), "every Node field of the contract, and runtimeReady: %v", item)
		Expect(item["id"]).To(Equal(string(n.UID)))
		Expect(item["name"]).To(Equal("nl-a"))
		Expect(item["address"]).To(Equal("10.3.0.7:7200"))
		Expect(item["status"]).To(Equal("online"))
		Expect(item["type"]).To(Equal("linux"))
		Expect(item["arch"]).To(Equal("amd64"))
		Expect(item["tls"]).To(BeTrue())
		Expect(item["createdTime"]).To(Equal(n.CreationTimestamp.In(time.FixedZone("UTC+8", 8*3600)).Format("2006-01-02 15:04:05")))
		Expect(item["upTime"]).To(BeNumerically("~", time.Since(bootTime.Time).Seconds(), 30))
		for _, k := range []string{"containerTotal", "containerRunning", "containerManagedTotal", "containerManagedRunning", "appTotal", "appRunning"} {
			Expect(item[k]).To(BeNumerically("==", 0), k)
		}
	})

	It("gives only id, name, type and arch with basicInfo=true", func() {
		var pg nodePage
		api("/api/v1/node" + query("name", "nl-c", "basicInfo", "true")).into(&pg)
		Expect(pg.List).To(ConsistOf(map[string]any{"id": string(getNode("nl-c").UID), "name": "nl-c", "type": "sylixos", "arch": "arm64"}))
	})

	It("matches the name case-insensitively as a substring, ordered by creation time then name", func() {
		var pg nodePage
		api("/api/v1/node" + query("name", "NL-", "pageSize", "-1")).into(&pg)
		Expect(pg.Total).To(Equal(12))
		Expect(pg.PageSize).To(Equal(-1))
		names := make([]string, 0, len(pg.List))
		for _, item := range pg.List {
			names = append(names, item["name"].(string))
		}
		want := make([]string, 0, len(nodes))
		for _, n := range sortedByCreation(nodes) {
			want = append(want, n.Name)
		}
		Expect(names).To(Equal(want))
	})

	It("pages: default size 10, the last partial page, a page past the end", func() {
		var pg nodePage
		api("/api/v1/node" + query("name", "nl-")).into(&pg)
		Expect([]int{pg.PageNum, pg.PageSize, pg.Total, len(pg.List)}).To(Equal([]int{1, 10, 12, 10}))
		api("/api/v1/node" + query("name", "nl-", "pageNum", "2")).into(&pg)
		Expect([]int{pg.PageNum, pg.Total, len(pg.List)}).To(Equal([]int{2, 12, 2}))
		api("/api/v1/node" + query("name", "nl-", "pageNum", "9", "pageSize", "5")).into(&pg)
		Expect([]int{pg.PageNum, pg.PageSize, pg.Total, len(pg.List)}).To(Equal([]int{9, 5, 12, 0}))
		Expect(pg.List).NotTo(BeNil(), "an empty page is [], not null")
	})

	DescribeTable("refuses bad paging and flags with a 400 naming the field",
		func(q, field string) {
			r := api("/api/v1/node" + q)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(r.FieldErrors).To(HaveKey(field))
		},
		Entry("pageSize 0", query("pageSize", "0"), "pageSize"),
		Entry("pageSize above 1000", query("pageSize", "1001"), "pageSize"),
		Entry("pageSize -2", query("pageSize", "-2"), "pageSize"),
		Entry("pageSize not a number", query("pageSize", "ten"), "pageSize"),
		Entry("pageNum 0", query("pageNum", "0"), "pageNum"),
		Entry("pageNum not a number", query("pageNum", "1.5"), "pageNum"),
		Entry("pageNum twice", "?pageNum=1&pageNum=2", "pageNum"),
		Entry("basicInfo not a boolean", query("basicInfo", "yes please"), "basicInfo"),
	)

	It("reports upTime 0 once a node is offline", func() {
		silence("nl-k")
		Eventually(func() any {
			var pg nodePage
			api("/api/v1/node" + query("name", "nl-k")).into(&pg)
			return pg.List[0]["status"]
		}).Should(Equal("offline"), "nl-k's status on GET /api/v1/node once its Lease is gone")
		var pg nodePage
		api("/api/v1/node" + query("name", "nl-k")).into(&pg)
		Expect(pg.List[0]["upTime"]).To(BeNumerically("==", 0))
	})
})

func lower(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c >= 'A' && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}

// sortedByCreation orders nodes as the facade must: creation time, then name.
func sortedByCreation(nodes []*edgev1alpha1.EdgeNode) []*edgev1alpha1.EdgeNode {
	out := append([]*edgev1alpha1.EdgeNode(nil), nodes...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			a, b := out[j-1], out[j]
			if a.CreationTimestamp.Before(&b.CreationTimestamp) || a.CreationTimestamp.Equal(&b.CreationTimestamp) && a.Name < b.Name {
				break
			}
			out[j-1], out[j] = b, a
		}
	}
	return out
}
