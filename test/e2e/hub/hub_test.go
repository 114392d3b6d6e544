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

package hub_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

var _ = Describe("Joining a device", func() {
	It("joins with a token bound to its node, once, and keeps the key on the device", func() {
		token := addNode("join-1", time.Hour)
		id, dir, err := join(token, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(id.Node).To(Equal("join-1"))
		Expect(id.Certificate().Subject.CommonName).To(Equal("join-1"))
		Expect(id.Certificate().NotAfter).To(BeTemporally("~", time.Now().Add(7*24*time.Hour), 2*time.Minute))
		st, err := os.Stat(filepath.Join(dir, "node.key"))
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Mode().Perm()).To(Equal(os.FileMode(0o600)), "the device's key is readable by its owner alone")
		Eventually(events("join-1")).Should(ContainElement("Joined"))

		_, again, err := join(token, "")
		Expect(refusal(err)).To(Equal(hubapi.RefusedTokenUsed), "a token joins one device once: %v", err)
		Expect(filepath.Join(again, "identity.json")).NotTo(BeAnExistingFile())
		Eventually(events("join-1")).Should(ContainElement("JoinRefused"))
	})

	It("refuses an expired, forged, unknown, malformed or another node's token, says why, and issues nothing", func() {
		expired := addNode("join-expired", -time.Minute)
		addNode("join-a", time.Hour)
		forThisNode := newToken("join-a", time.Hour)
		addNode("join-b", time.Hour)
		forged := forThisNode[:7] + strings.Repeat("0", 16)
		unknown, err := hubapi.NewToken()
		Expect(err).NotTo(HaveOccurred())
		for _, tc := range []struct{ token, node, reason string }{
			{expired, "", hubapi.RefusedTokenExpired},
			{forged, "", hubapi.RefusedTokenInvalid},
			{unknown.String(), "", hubapi.RefusedTokenUnknown},
			{forThisNode, "join-b", hubapi.RefusedWrongNode},
		} {
			_, dir, err := join(tc.token, tc.node)
			Expect(refusal(err)).To(Equal(tc.reason), "token %s for %q: %v", tc.token, tc.node, err)
			Expect(filepath.Join(dir, "identity.json")).NotTo(BeAnExistingFile())
		}
		_, _, err = join("abc", "")
		Expect(err).To(MatchError(ContainSubstring("join token")), "a malformed token is refused before it is sent")

		By("the tokens refused for their node are still unused: the right device can join with one")
		id, _, err := join(forThisNode, "join-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(id.Node).To(Equal("join-a"))
		Eventually(events("join-expired")).Should(ContainElement("JoinRefused"))
		Eventually(events("join-b")).ShouldNot(ContainElement("Joined"))
	})
})

var _ = Describe("A simulator of many devices", func() {
	It("plays each device with an identity and a connection of its own", func() {
		ids := map[string]*hubconn.Identity{}
		var nodes []agent.Node
		for _, name := range []string{"sim-1", "sim-2", "sim-3"} {
			id, _, err := join(addNode(name, time.Hour), "")
			Expect(err).NotTo(HaveOccurred())
			ids[name] = id
			nodes = append(nodes, agent.Node{Name: name, Type: "linux", Arch: "amd64", Address: "10.1.0.1:7200"})
		}
		o := agentOptions(nodes)
		o.NodeConfig = func(n agent.Node) (*rest.Config, error) { return ids[n.Name].RESTConfig() }
		stop := runAgentWith(nil, o)
		defer stop()
		for name := range ids {
			Eventually(nodeState(name)).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}), name)
		}
	})
})

var _ = Describe("A device behind the hub", Ordered, func() {
	var (
		id       *hubconn.Identity
		stop     func()
		nodeHTTP *http.Client
	)
	BeforeAll(func() {
		addNode("other-1", time.Hour)
		var err error
		id, _, err = join(addNode("dev-1", time.Hour), "")
		Expect(err).NotTo(HaveOccurred())
		stop = runAgent(id)
		DeferCleanup(func() { stop() })
		rc, err := id.RESTConfig()
		Expect(err).NotTo(HaveOccurred())
		nodeHTTP, err = rest.HTTPClientFor(rc)
		Expect(err).NotTo(HaveOccurred())
	})

	It("comes online through the hub and runs its service", func() {
		Eventually(nodeState("dev-1")).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}))
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "through-hub"},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "web@1.0#linux"}}, Nodes: []string{"dev-1"}},
		}
		Expect(c.Create(ctx, svc)).To(Succeed())
		Eventually(func() int32 {
			s := &edgev1alpha1.EdgeService{}
			_ = c.Get(ctx, client.ObjectKeyFromObject(svc), s)
			return s.Status.ReadyReplicas
		}).Should(Equal(int32(1)), "the instance runs: the assignment reached the agent and its report the API server")

		By("answering a report with the node's metadata, not its status: the device's link carries what the agent reads")
		code, body := call(nodeHTTP, "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1", "")
		Expect(code).To(Equal(http.StatusOK), body)
		node := &edgev1alpha1.EdgeNode{}
		Expect(json.Unmarshal([]byte(body), node)).To(Succeed())
		Expect(node.Status.Containers).NotTo(BeEmpty())
		// The agent's own fields as they are, so that the report changes nothing.
		st := node.Status
		st.Status, st.ObservedGeneration, st.Conditions = "", 0, nil
		for _, c := range node.Status.Conditions {
			if c.Type == edgev1alpha1.ConditionRuntimeReady {
				st.Conditions = append(st.Conditions, c)
			}
		}
		report, err := json.Marshal(map[string]any{"apiVersion": edgev1alpha1.GroupVersion.String(), "kind": "EdgeNode",
			"metadata": map[string]any{"name": "dev-1"}, "status": st})
		Expect(err).NotTo(HaveOccurred())
		code, answer := call(nodeHTTP, "PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1/status?fieldManager=edge-agent&force=true", string(report))
		Expect(code).To(Equal(http.StatusOK), answer)
		Expect(answer).To(ContainSubstring(`"resourceVersion"`))
		Expect(answer).NotTo(ContainSubstring(node.Status.Containers[0].Name), "no status")
		Expect(answer).NotTo(ContainSubstring("managedFields"))
	})

	It("is refused every object of another node, and anything else", func() {
		for _, tc := range []struct{ method, path string }{
			{"GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments/other-1"},
			{"GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments?fieldSelector=metadata.name%3Dother-1&watch=true"},
			{"GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/other-1"},
			{"PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/other-1/status?fieldManager=edge-agent"},
			{"PUT", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases/other-1"},
			{"GET", "/api/v1/namespaces/edgeplane-node-lease/secrets/other-1"},
			{"GET", "/apis/edge.edgeplane.io/v1alpha1/namespaces/default/edgeservices"},
			{"GET", "/api/v1/namespaces/kube-system/secrets"},
		} {
			code, body := call(nodeHTTP, tc.method, tc.path, "{}")
			Expect(code).To(Equal(http.StatusForbidden), "%s %s: %s", tc.method, tc.path, body)
		}
		code, body := call(nodeHTTP, "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1", "")
		Expect(code).To(Equal(http.StatusOK), "its own node: %s", body)

		By("a report that writes the controller's fields is refused")
		code, body = call(nodeHTTP, "PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1/status?fieldManager=edge-agent&force=true",
			`{"apiVersion":"edge.edgeplane.io/v1alpha1","kind":"EdgeNode","metadata":{"name":"dev-1"},"status":{"status":"online"}}`)
		Expect(code).To(Equal(http.StatusForbidden), body)
	})

	It("beats without a write to the API server while it stays online", func() {
		Eventually(nodeState("dev-1")).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}))
		lease := &coordinationv1.Lease{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: "dev-1"}, lease)).To(Succeed())
		Expect(*lease.Spec.HolderIdentity).To(Equal(hubapi.HolderPrefix + "hub-a"))
		beats := counter("edgeplane_hub_beats_total")
		time.Sleep(2 * grace) // the agent renews every 500 ms
		after := &coordinationv1.Lease{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(lease), after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(lease.ResourceVersion), "no heartbeat reached the API server")
		Expect(counter("edgeplane_hub_beats_total")-beats).To(BeNumerically(">=", 8), "the agent beat at the hub meanwhile")
		Expect(nodeState("dev-1")()).To(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}), "and the node stayed online")
	})

	It("moves to another hub replica when its replica dies, and never goes offline", func() {
		Eventually(nodeState("dev-1")).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}))
		addrB, _ := startHub("hub-b")
		proxy.SetTarget(addrB)
		stopHubA()
		Eventually(func() string {
			lease := &coordinationv1.Lease{}
			_ = c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: "dev-1"}, lease)
			return ptr.Deref(lease.Spec.HolderIdentity, "")
		}).Should(Equal(hubapi.HolderPrefix+"hub-b"), "the agent reconnected to the replica left")
		Consistently(nodeState("dev-1"), 2*grace).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}))
		Expect(events("dev-1")()).NotTo(ContainElement("NodeOffline"), "the node was never declared offline")
	})

	It("goes offline when its agent stops beating, and online when it beats again", func() {
		stop()
		Eventually(nodeState("dev-1"), 3*grace).Should(Equal([]string{"offline", edgev1alpha1.ReasonAgentDisconnected}))
		stop = runAgent(id)
		Eventually(nodeState("dev-1")).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}))
	})

	It("is cut off within seconds when revoked, and refused after", func() {
		patch := client.MergeFrom(&edgev1alpha1.EdgeNode{})
		n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "dev-1",
			Annotations: map[string]string{hubapi.AnnotationRevokedBefore: time.Now().UTC().Add(time.Second).Format(time.RFC3339)}}}
		Expect(c.Patch(ctx, n, patch)).To(Succeed())
		Eventually(func() int {
			code, _ := call(nodeHTTP, "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1", "")
			return code
		}, 5*time.Second).Should(Equal(http.StatusUnauthorized))
		_, body := call(nodeHTTP, "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1", "")
		Expect(body).To(ContainSubstring("revoked"))
		Eventually(nodeState("dev-1"), 3*grace).Should(Equal([]string{"offline", edgev1alpha1.ReasonAgentDisconnected}))

		By("a new token joins it again")
		id2, _, err := join(newToken("dev-1", time.Hour), "")
		Expect(err).NotTo(HaveOccurred())
		stop()
		stop = runAgent(id2)
		Eventually(nodeState("dev-1")).Should(Equal([]string{"online", edgev1alpha1.ReasonAgentReady}))
	})

	It("is cut off when its EdgeNode is deleted", func() {
		Expect(c.Delete(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "dev-1"}})).To(Succeed())
		Eventually(func() string {
			_, body := call(nodeHTTP, "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/dev-1", "")
			return body
		}, 5*time.Second).Should(ContainSubstring("no longer exists"))
	})
})

// refusal is the reason of a join the hub refused; empty otherwise.
func refusal(err error) string {
	var r *hubconn.Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

// call sends one request to the hub as a node.
func call(hc *http.Client, method, path, body string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, hubURL+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	if strings.Contains(path, "watch=true") && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// counter reads a counter of the process's metrics registry.
func counter(name string) float64 {
	GinkgoHelper()
	v, err := testenv.Counter(name)
	Expect(err).NotTo(HaveOccurred())
	return v
}

var _ = Describe("Hub replicas of a rollout", func() {
	It("all start when they start together and another URL was published, and publish theirs", func() {
		By("the info ConfigMap saying another URL, as a rollout that changes the advertised URL finds it")
		info := &corev1.ConfigMap{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: hubapi.InfoConfigMap}, info)).To(Succeed())
		info.Data[hubapi.InfoServer] = "https://hub.old.example:443"
		Expect(c.Update(ctx, info)).To(Succeed())

		By("starting four replicas at once: each finds the old URL and writes its own")
		var wg sync.WaitGroup
		stops := make([]func(), 4)
		for i := range stops {
			wg.Go(func() {
				defer GinkgoRecover()
				_, stops[i] = startHub(fmt.Sprintf("hub-rollout-%d", i))
			})
		}
		wg.Wait()
		for _, stop := range stops {
			if stop != nil {
				DeferCleanup(stop)
			}
		}
		Expect(stops).NotTo(ContainElement(BeNil()), "every replica serves")
		Expect(c.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: hubapi.InfoConfigMap}, info)).To(Succeed())
		Expect(info.Data[hubapi.InfoServer]).To(Equal(hubURL))
	})
})
