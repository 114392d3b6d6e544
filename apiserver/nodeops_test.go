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
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// hubNamespace is where the facade finds the hub's info and writes join
// tokens.
const hubNamespace = "edgeplane-system"

// joinReply is the answer of POST /api/v1/node and /api/v1/node/{id}/token.
type joinReply struct {
	ID, Name, Command, Expires string
}

var joinCommand = regexp.MustCompile(`^edge-agent join --hub (\S+) --token (\S+) --ca-cert-hash (\S+)$`)

// joinTokens are the join token Secrets of node in the hub's namespace.
func joinTokens(node string) []corev1.Secret {
	GinkgoHelper()
	list := &corev1.SecretList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(hubNamespace), client.MatchingLabels{hubapi.LabelJoinNode: node})).To(Succeed())
	return list.Items
}

func edgeNodeExists(name string) bool {
	GinkgoHelper()
	err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, &edgev1alpha1.EdgeNode{})
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err == nil
}

var _ = Describe("The facade's node operations", func() {
	var caHash string
	BeforeEach(func() {
		err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}})
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		ca, err := testenv.NewCA("edge hub")
		Expect(err).NotTo(HaveOccurred())
		block, _ := pem.Decode(ca.PEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		Expect(err).NotTo(HaveOccurred())
		caHash = hubapi.CAHash(cert)
		info := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: hubapi.InfoConfigMap},
			Data: map[string]string{hubapi.InfoServer: "https://hub.example:8443", hubapi.InfoCACert: string(ca.PEM)}}
		Expect(k8sClient.Create(ctx, info)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, info))).To(Succeed())
		})
	})

	// check reads a join command and holds its token to the Secret made
	// for node.
	check := func(j joinReply, node string, ttl time.Duration) hubapi.Token {
		GinkgoHelper()
		m := joinCommand.FindStringSubmatch(j.Command)
		Expect(m).NotTo(BeNil(), j.Command)
		Expect(m[1]).To(Equal("https://hub.example:8443"))
		Expect(m[3]).To(Equal(caHash))
		t, err := hubapi.ParseToken(m[2])
		Expect(err).NotTo(HaveOccurred())
		s := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: hubapi.JoinSecretName(t.ID)}, s)).To(Succeed())
		joins, refused := hubapi.CheckToken(s, t, node, time.Now())
		Expect(refused).To(BeNil())
		Expect(joins).To(Equal(node))
		expires, err := time.Parse(time.RFC3339, j.Expires)
		Expect(err).NotTo(HaveOccurred())
		Expect(expires).To(BeTemporally("~", time.Now().Add(ttl), time.Minute))
		Expect(j.Expires).To(HaveSuffix("Z"))
		_, refused = hubapi.CheckToken(s, t, node, expires.Add(time.Second))
		Expect(refused).To(HaveField("Reason", hubapi.RefusedTokenExpired))
		Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", BeEquivalentTo(j.ID))), "deleting the node deletes its tokens")
		return t
	}

	It("adds a node with a join token whose command joins its device", func() {
		r := sendJSON(http.MethodPost, "/api/v1/node", map[string]any{"name": "join-a", "address": "10.0.0.7:8080", "type": "linux", "arch": "arm64",
			"labels": map[string]string{"site": "plant-a", "line": "3"}, "ttlSeconds": 7200})
		Expect(r.HTTP).To(Equal(http.StatusOK), r.Message)
		Expect(r.object()).To(HaveLen(4))
		var j joinReply
		r.into(&j)
		node := getNode("join-a")
		Expect(j.ID).To(Equal(string(node.UID)))
		Expect(j.Name).To(Equal("join-a"))
		Expect(node.Labels).To(Equal(map[string]string{"site": "plant-a", "line": "3"}))
		Expect(node.Spec).To(Equal(edgev1alpha1.EdgeNodeSpec{Type: "linux", Arch: "arm64", Address: "10.0.0.7:8080"}))
		Expect(node.ManagedFields).To(ContainElement(HaveField("Manager", apiserver.FieldManager)))
		check(j, "join-a", 2*time.Hour)
		Expect(joinTokens("join-a")).To(HaveLen(1))

		// An hour when not said.
		r = sendJSON(http.MethodPost, "/api/v1/node", map[string]any{"name": "join-b", "address": "10.0.0.8:8080"})
		Expect(r.HTTP).To(Equal(http.StatusOK), r.Message)
		r.into(&j)
		check(j, "join-b", time.Hour)
	})

	It("adds a node by its name alone; the node list shows the address its agent reports, and the operator's over it", func() {
		r := sendJSON(http.MethodPost, "/api/v1/node", map[string]any{"name": "join-named"})
		Expect(r.HTTP).To(Equal(http.StatusOK), r.Message)
		var j joinReply
		r.into(&j)
		check(j, "join-named", time.Hour)
		node := getNode("join-named")
		Expect(node.Spec).To(Equal(edgev1alpha1.EdgeNodeSpec{}))
		address := func() any {
			var pg nodePage
			r := api("/api/v1/node" + query("name", "join-named"))
			Expect(r.Status).To(Equal(http.StatusOK), r.Message)
			r.into(&pg)
			Expect(pg.List).To(HaveLen(1))
			return pg.List[0]["address"]
		}
		Eventually(address).Should(Equal(""), "no address before its agent reports one")

		By("its agent joining and reporting where it is reached")
		Expect(testenv.RenewLease(ctx, k8sClient, opts.LeaseNamespace, "join-named")).To(Succeed())
		Expect(testenv.Report(ctx, k8sClient, "join-named", edgev1alpha1.NodeInfo{Type: "linux", Arch: "arm64", Address: "192.168.10.21:7200",
			AgentVersion: "test", ReadsAssignment: true}, &bootTime)).To(Succeed())
		Eventually(address).Should(Equal("192.168.10.21:7200"))

		By("the operator's spec.address winning over it")
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.Address = "edge-7.plant.example:8080"
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
		Eventually(address).Should(Equal("edge-7.plant.example:8080"))
		Expect(getNode("join-named").Status.NodeInfo.Address).To(Equal("192.168.10.21:7200"))
	})

	It("issues a new join token for a node that exists, and 404 for an id that is none", func() {
		r := sendJSON(http.MethodPost, "/api/v1/node", map[string]any{"name": "join-t", "address": "10.0.0.9:8080"})
		Expect(r.HTTP).To(Equal(http.StatusOK), r.Message)
		var first joinReply
		r.into(&first)
		t1 := check(first, "join-t", time.Hour)

		var j joinReply
		Eventually(func() int { // the facade's cache knows the node
			r = sendJSON(http.MethodPost, "/api/v1/node/"+first.ID+"/token", map[string]any{"ttlSeconds": 900})
			return r.HTTP
		}).Should(Equal(http.StatusOK))
		r.into(&j)
		Expect(j.ID).To(Equal(first.ID))
		Expect(j.Name).To(Equal("join-t"))
		t2 := check(j, "join-t", 15*time.Minute)
		Expect(t2).NotTo(Equal(t1))
		Expect(joinTokens("join-t")).To(HaveLen(2), "the first token stays good until used or expired")

		r = sendJSON(http.MethodPost, "/api/v1/node/"+first.ID+"/token", map[string]any{"ttlSeconds": 0})
		Expect(r.HTTP).To(Equal(http.StatusBadRequest))
		Expect(r.FieldErrors).To(HaveKey("ttlSeconds"))

		r = sendJSON(http.MethodPost, "/api/v1/node/00000000-0000-0000-0000-000000000000/token", map[string]any{})
		Expect(r.HTTP).To(Equal(http.StatusNotFound))
		Expect(r.Message).To(ContainSubstring("00000000-0000-0000-0000-000000000000"))
		Expect(joinTokens("join-t")).To(HaveLen(2))
	})

	It("refuses bad input with the fields named, and creates nothing", func() {
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"address": "10.0.0.7:8080"}, "name"},
			{map[string]any{"name": "Join_Bad", "address": "10.0.0.7:8080"}, "name"},
			{map[string]any{"name": "join-bad-x1234567890123456789012345678901234567890123456789012345", "address": "10.0.0.7:8080"}, "name"},
			{map[string]any{"name": "join-bad", "address": "nowhere"}, "address"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7"}, "address"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "type": "Linux"}, "type"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "arch": "ARM 64"}, "arch"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "labels": map[string]string{"bad/key/x": "1"}}, "labels"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "labels": map[string]string{"site": "a_"}}, "labels"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "labels": map[string]any{"site": 3}}, "labels"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "ttlSeconds": 0}, "ttlSeconds"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "ttlSeconds": 7*24*3600 + 1}, "ttlSeconds"},
			{map[string]any{"name": "join-bad", "address": "10.0.0.7:8080", "ttlSeconds": "1h"}, "ttlSeconds"},
		} {
			r := sendJSON(http.MethodPost, "/api/v1/node", c.body)
			Expect(r.HTTP).To(Equal(http.StatusBadRequest), "%v: %s", c.body, r.Message)
			Expect(r.FieldErrors).To(HaveKeyWithValue(c.field, Not(BeEmpty())), "%v", c.body)
		}
		Expect(edgeNodeExists("join-bad")).To(BeFalse())
		Expect(joinTokens("join-bad")).To(BeEmpty())
	})

	It("refuses a name taken with 409 and issues no token", func() {
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "join-taken"},
			Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.9:8080"}})).To(Succeed())
		r := sendJSON(http.MethodPost, "/api/v1/node", map[string]any{"name": "join-taken", "address": "10.0.0.7:8080"})
		Expect(r.HTTP).To(Equal(http.StatusConflict))
		Expect(r.FieldErrors).To(HaveKey("name"))
		Expect(getNode("join-taken").Spec.Address).To(Equal("10.0.0.9:8080"))
		Expect(joinTokens("join-taken")).To(BeEmpty())
	})

	It("answers 503 saying the hub is not running when it has published nothing, and creates nothing", func() {
		Expect(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: hubapi.InfoConfigMap}})).To(Succeed())
		r := sendJSON(http.MethodPost, "/api/v1/node", map[string]any{"name": "join-nohub", "address": "10.0.0.7:8080"})
		Expect(r.HTTP).To(Equal(http.StatusServiceUnavailable))
		Expect(r.Message).To(HavePrefix("The edge hub is not running"))
		Expect(edgeNodeExists("join-nohub")).To(BeFalse())
		Expect(joinTokens("join-nohub")).To(BeEmpty())

		n := createNode("join-nohub-b", "linux", "amd64")
		Eventually(func() int {
			return sendJSON(http.MethodPost, "/api/v1/node/"+string(n.UID)+"/token", map[string]any{}).HTTP
		}).Should(Equal(http.StatusServiceUnavailable))
		Expect(joinTokens("join-nohub-b")).To(BeEmpty())
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: hubapi.InfoConfigMap}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue())
	})
})
