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

package kubectledge_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cli/kubectledge"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// kubectlEdgeSplit runs the plugin as kubectlEdge does, keeping stdout
// and stderr apart: the join command must be alone on stdout.
func kubectlEdgeSplit(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := kubectledge.NewCommand(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err = cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

var joinLine = regexp.MustCompile(`^edge-agent join --hub (\S+) --token (\S+) --ca-cert-hash (\S+)\n$`)

// joined reads the printed join command: the hub, the token, the pin.
func joined(stdout string) (string, hubapi.Token, string) {
	GinkgoHelper()
	m := joinLine.FindStringSubmatch(stdout)
	Expect(m).NotTo(BeNil(), "one join command on stdout: %q", stdout)
	t, err := hubapi.ParseToken(m[2])
	Expect(err).NotTo(HaveOccurred())
	return m[1], t, m[3]
}

// publishHub makes the ConfigMap the hub publishes in ns, and returns the
// pin of its CA.
func publishHub(ns string) string {
	GinkgoHelper()
	ca, err := testenv.NewCA("edge hub")
	Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(ca.PEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hubapi.InfoConfigMap},
		Data: map[string]string{hubapi.InfoServer: "https://hub.example:8443", hubapi.InfoCACert: string(ca.PEM)}})).To(Succeed())
	return hubapi.CAHash(cert)
}

// tokens are the join token Secrets in ns.
func tokens(ns string) []corev1.Secret {
	GinkgoHelper()
	list := &corev1.SecretList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns), client.HasLabels{hubapi.LabelJoinNode})).To(Succeed())
	return list.Items
}

// tokenSecret is the Secret of t.
func tokenSecret(ns string, t hubapi.Token) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: hubapi.JoinSecretName(t.ID)}, s)).To(Succeed())
	return s
}

func nodeExists(name string) bool {
	GinkgoHelper()
	err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, &edgev1alpha1.EdgeNode{})
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err == nil
}

var _ = Describe("kubectl edge node", func() {
	var hubNS, name, caHash string
	BeforeEach(func() {
		hubNS = newNamespace()
		name = hubNS + "-edge"
		caHash = publishHub(hubNS)
	})

	It("adds a node and prints the command that joins its device once", func() {
		stdout, stderr, err := kubectlEdgeSplit("node", "add", name, "--labels=site=plant-a,line=3", "--type=linux", "--arch=arm64",
			"--address=10.0.0.7:8080", "--ttl=2h", "--hub-namespace", hubNS)
		Expect(err).NotTo(HaveOccurred())
		hub, t, pin := joined(stdout)
		Expect(hub).To(Equal("https://hub.example:8443"))
		Expect(pin).To(Equal(caHash))
		Expect(stderr).To(MatchRegexp(`^the token joins node ` + name + ` once, until \S+\n$`))
		until, err := time.Parse(time.RFC3339, strings.TrimSpace(stderr[strings.LastIndex(stderr, " "):]))
		Expect(err).NotTo(HaveOccurred())
		Expect(until).To(BeTemporally("~", time.Now().Add(2*time.Hour), time.Minute))

		node := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
		Expect(node.Labels).To(Equal(map[string]string{"site": "plant-a", "line": "3"}))
		Expect(node.Spec).To(Equal(edgev1alpha1.EdgeNodeSpec{Type: "linux", Arch: "arm64", Address: "10.0.0.7:8080"}))
		Expect(node.ManagedFields).To(ContainElement(HaveField("Manager", kubectledge.FieldManager)))

		s := tokenSecret(hubNS, t)
		_, refused := hubapi.CheckToken(s, t, name, time.Now())
		Expect(refused).To(BeNil())
		_, refused = hubapi.CheckToken(s, t, name, time.Now().Add(3*time.Hour))
		Expect(refused).To(HaveField("Reason", hubapi.RefusedTokenExpired))
		Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", node.UID)), "deleting the node deletes its tokens")
		Expect(tokens(hubNS)).To(HaveLen(1))

		// A new token for the same node, reached by another name.
		stdout, _, err = kubectlEdgeSplit("node", "token", name, "--hub=https://10.1.2.3:443", "--hub-namespace", hubNS)
		Expect(err).NotTo(HaveOccurred())
		hub, t2, pin := joined(stdout)
		Expect(hub).To(Equal("https://10.1.2.3:443"))
		Expect(pin).To(Equal(caHash))
		Expect(t2).NotTo(Equal(t))
		_, refused = hubapi.CheckToken(tokenSecret(hubNS, t2), t2, name, time.Now())
		Expect(refused).To(BeNil())
		Expect(tokens(hubNS)).To(HaveLen(2), "the first token stays good until used or expired")
	})

	It("adds a node by its name alone: its agent reports the address", func() {
		stdout, stderr, err := kubectlEdgeSplit("node", "add", name, "--hub-namespace", hubNS)
		Expect(err).NotTo(HaveOccurred(), stderr)
		hub, t, pin := joined(stdout)
		Expect(hub).To(Equal("https://hub.example:8443"))
		Expect(pin).To(Equal(caHash))
		node := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
		Expect(node.Spec).To(Equal(edgev1alpha1.EdgeNodeSpec{}))
		Expect(node.Address()).To(BeEmpty())
		_, refused := hubapi.CheckToken(tokenSecret(hubNS, t), t, name, time.Now())
		Expect(refused).To(BeNil())
	})

	It("creates nothing when the hub has not published how to reach it", func() {
		other := newNamespace()
		_, _, err := kubectlEdgeSplit("node", "add", name, "--address=10.0.0.7:8080", "--hub-namespace", other)
		Expect(err).To(MatchError("the edge hub has not published ConfigMap edgeplane-hub-info in namespace " + other +
			": is the hub running? (manager --hub-bind-address)"))
		Expect(nodeExists(name)).To(BeFalse())
		Expect(tokens(other)).To(BeEmpty())
	})

	It("refuses to add a node that exists, and issues no token for it", func() {
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.9:8080"}})).To(Succeed())
		stdout, _, err := kubectlEdgeSplit("node", "add", name, "--address=10.0.0.7:8080", "--hub-namespace", hubNS)
		Expect(err).To(MatchError("edgenode/" + name + " already exists; for a new join token run kubectl edge node token " + name))
		Expect(stdout).To(BeEmpty())
		Expect(tokens(hubNS)).To(BeEmpty())
	})

	It("refuses bad input and changes nothing", func() {
		for args, want := range map[string]string{
			"Bad_Name":                       `"Bad_Name" cannot name an edge node: a lowercase RFC 1123 subdomain`,
			name + " --labels=site":          `--labels "site": want KEY=VALUE pairs joined by commas`,
			name + " --labels=bad/key/x=1":   `--labels: "bad/key/x" is not a label key`,
			name + " --labels=site=a,site=b": `--labels gives site twice`,
			name + " --labels=site=a_":       `--labels: "a_" is not a value of label site`,
			name + " --ttl=0s":               `--ttl 0s: a join token lasts more than 0 and at most 168h0m0s`,
			name + " --ttl=169h":             `--ttl 169h0m0s: a join token lasts more than 0 and at most 168h0m0s`,
			name + " --hub=http://hub:80":    `--hub "http://hub:80": give the hub's URL as devices reach it, https://HOST:PORT`,
			name + " --address=nowhere":      `EdgeNode.edge.edgeplane.io "` + name + `" is invalid: spec.address: Invalid value: `,
		} {
			_, _, err := kubectlEdgeSplit(append([]string{"node", "add", "--hub-namespace", hubNS}, strings.Fields(args)...)...)
			Expect(err).To(MatchError(HavePrefix(want)), args)
		}
		Expect(nodeExists(name)).To(BeFalse())
		Expect(tokens(hubNS)).To(BeEmpty())
	})

	It("takes the node back when its token cannot be created, so that a retry works", func() {
		// A namespace being deleted serves its ConfigMap and refuses a new
		// Secret; envtest runs no namespace controller to finish it.
		Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNS}})).To(Succeed())
		stdout, _, err := kubectlEdgeSplit("node", "add", name, "--address=10.0.0.7:8080", "--hub-namespace", hubNS)
		Expect(err).To(MatchError(HavePrefix("creating the join token of edgenode/" + name + " in namespace " + hubNS + ": ")))
		Expect(stdout).To(BeEmpty())
		Expect(nodeExists(name)).To(BeFalse())
	})

	It("issues a token only for a node that exists", func() {
		stdout, _, err := kubectlEdgeSplit("node", "token", name, "--hub-namespace", hubNS)
		Expect(err).To(MatchError("edgenode/" + name + " does not exist; add it with kubectl edge node add " + name))
		Expect(stdout).To(BeEmpty())
		Expect(tokens(hubNS)).To(BeEmpty())
		_, _, err = kubectlEdgeSplit("node", "revoke", name, "--hub-namespace", hubNS)
		Expect(err).To(MatchError("edgenode/" + name + " does not exist; add it with kubectl edge node add " + name))
	})

	It("revokes a node: refuses its certificates from now, deletes its unused tokens and keeps the rest", func() {
		other := name + "-b"
		issue := func(node string) hubapi.Token {
			GinkgoHelper()
			stdout, _, err := kubectlEdgeSplit("node", "token", node, "--hub-namespace", hubNS)
			Expect(err).NotTo(HaveOccurred())
			_, t, _ := joined(stdout)
			return t
		}
		stdout, _, err := kubectlEdgeSplit("node", "add", name, "--address=10.0.0.7:8080", "--hub-namespace", hubNS)
		Expect(err).NotTo(HaveOccurred())
		_, unused, _ := joined(stdout)
		unused2, used := issue(name), issue(name)
		s := tokenSecret(hubNS, used)
		Expect(k8sClient.Update(ctx, hubapi.MarkUsed(s, time.Now()))).To(Succeed())
		_, _, err = kubectlEdgeSplit("node", "add", other, "--address=10.0.0.8:8080", "--hub-namespace", hubNS)
		Expect(err).NotTo(HaveOccurred())
		Expect(tokens(hubNS)).To(HaveLen(4))

		before := time.Now().Truncate(time.Second)
		out, err := kubectlEdge("node", "revoke", name, "--hub-namespace", hubNS)
		Expect(err).NotTo(HaveOccurred())
		m := regexp.MustCompile(`^edgenode/` + name + ` revoked: its certificates are refused from (\S+); a new token joins it again \(kubectl edge node token ` + name + `\)\n$`).FindStringSubmatch(out)
		Expect(m).NotTo(BeNil(), out)
		node := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
		Expect(node.Annotations).To(HaveKeyWithValue(hubapi.AnnotationRevokedBefore, m[1]))
		at, err := time.Parse(time.RFC3339, m[1])
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(BeTemporally(">=", before))
		Expect(at).To(BeTemporally("<=", time.Now()))
		Expect(m[1]).To(HaveSuffix("Z"))

		var left []string
		for _, s := range tokens(hubNS) {
			left = append(left, s.Name)
		}
		Expect(left).NotTo(ContainElements(hubapi.JoinSecretName(unused.ID), hubapi.JoinSecretName(unused2.ID)))
		Expect(left).To(ContainElement(hubapi.JoinSecretName(used.ID)), "a used token stays")
		Expect(left).To(HaveLen(2), "the other node's token stays")
		o := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: other}, o)).To(Succeed())
		Expect(o.Annotations).NotTo(HaveKey(hubapi.AnnotationRevokedBefore))

		// A new token joins it again.
		t := issue(name)
		_, refused := hubapi.CheckToken(tokenSecret(hubNS, t), t, name, time.Now())
		Expect(refused).To(BeNil())
	})

	It("explains each command in --help", func() {
		for _, sub := range []string{"add", "token", "revoke"} {
			out, err := kubectlEdge("node", sub, "--help")
			Expect(err).NotTo(HaveOccurred())
			matchGolden(out, "help-node-"+sub+".golden")
		}
	})
})
