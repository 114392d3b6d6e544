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

package engine

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/testregistry"
)

const memoryLimit = 64 << 20

// kills is how many times the agent process is SIGKILLed mid-replacement.
const kills = 5

// Specs are the claims every engine must bear out, in order: the body of
// an Ordered container of the engine's suite.
func Specs(kind string) {
	n := &node{kind: kind, name: "edge-" + kind + "-01"}
	BeforeAll(n.start)
	AfterAll(n.stop)
	var first map[string]any // web's container as the facade first showed it
	// Service names carry the engine's kind, so the two kinds never meet.
	web, cache, ghost := "web-"+kind, "cache-"+kind, "ghost-"+kind
	secure, anonymous, absent := "secure-"+kind, "anonymous-"+kind, "absent-"+kind
	service := func(name string, ref edgev1alpha1.ImageRef, mutate func(*edgev1alpha1.EdgeServiceSpec)) *edgev1alpha1.EdgeService {
		return service(name, n.name, ref, mutate)
	}
	inspect := func(id string) container.InspectResponse {
		GinkgoHelper()
		return inspect(n.eng, id)
	}
	managedIDs := func() []string {
		GinkgoHelper()
		return managedIDs(n.eng, n.name)
	}

	It("runs a service's container: the facade shows the engine's id, state and figures", func() {
		Expect(sys.Client.Create(ctx, service(web, "box@1#linux", func(s *edgev1alpha1.EdgeServiceSpec) {
			s.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{
				Hostname: web, Env: []string{"GREETING=hello"}, Restart: "always", Memory: memoryLimit,
			}}
		}))).To(Succeed())
		Eventually(func(g Gomega) {
			c := only(g, web)
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "success"))
			g.Expect(c).To(HaveKeyWithValue("status", "running"))
			g.Expect(c["memoryUsage"]).To(BeNumerically(">", 0))
			first = c
		}).Should(Succeed())

		got := inspect(first["id"].(string))
		Expect(got.State.Running).To(BeTrue())
		Expect(strings.HasPrefix(got.ID, first["id"].(string))).To(BeTrue(), "the facade's id is the engine's")
		Expect(got.Name).To(HaveSuffix(first["name"].(string)))
		Expect(got.Config.Labels).To(HaveKeyWithValue(agent.LabelTaskID, first["taskId"]))
		Expect(got.Config.Image).To(Equal("edgeplane.local/box:1"))
		Expect(got.Config.Env).To(ContainElement("GREETING=hello"))
		Expect(got.Config.Hostname).To(Equal(web))
		Expect(string(got.HostConfig.RestartPolicy.Name)).To(Equal("always"))
		Expect(first["imageId"]).To(Equal(got.Image))
		Expect(first["startedTime"]).To(Equal(got.State.StartedAt[:19] + "Z"))
	})

	It("applies the memory limit, and reports it", func() {
		Expect(inspect(first["id"].(string)).HostConfig.Memory).To(BeNumerically("==", memoryLimit))
		Expect(first["memoryLimit"]).To(BeNumerically("==", memoryLimit))
	})

	It("reports the node with the engine's version and counts a container it did not create", func() {
		res, err := n.eng.ContainerCreate(ctx, client.ContainerCreateOptions{Name: "not-ours", Config: &container.Config{Image: "edgeplane.local/box:1"}})
		Expect(err).NotTo(HaveOccurred())
		_, err = n.eng.ContainerStart(ctx, res.ID, client.ContainerStartOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			en := &edgev1alpha1.EdgeNode{}
			g.Expect(sys.Client.Get(ctx, ctrlclient.ObjectKey{Name: n.name}, en)).To(Succeed())
			g.Expect(en.Status.NodeInfo.RuntimeVersion).To(ContainSubstring(map[string]string{"podman": "Podman Engine", "docker": "Docker Engine"}[kind]))
			g.Expect(en.Status.NodeInfo.MaxInstances).To(BeNumerically("==", edgev1alpha1.DefaultMaxInstances), "what placement may put on it")
			g.Expect(en.Status.ContainerTotal).To(BeNumerically("==", 2))
			g.Expect(en.Status.ContainerManagedTotal).To(BeNumerically("==", 1))
		}).Should(Succeed())
	})

	It("replaces the container when the image changes, and adds a record", func() {
		svc := &edgev1alpha1.EdgeService{}
		Expect(sys.Client.Get(ctx, key(web), svc)).To(Succeed())
		// A patch: the controller writes the status meanwhile, and an update of
		// what was read would conflict with it.
		base := ctrlclient.MergeFrom(svc.DeepCopy())
		svc.Spec.Image.Ref = "box@2#linux"
		Expect(sys.Client.Patch(ctx, svc, base)).To(Succeed())
		var second map[string]any
		Eventually(func(g Gomega) {
			c := only(g, web)
			g.Expect(c["id"]).NotTo(Equal(first["id"]))
			g.Expect(c).To(HaveKeyWithValue("imageVersion", "2"))
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "success"))
			g.Expect(c).To(HaveKeyWithValue("status", "running"))
			second = c
		}).Should(Succeed())
		Expect(inspect(second["id"].(string)).Config.Image).To(Equal("edgeplane.local/box:2"))
		_, err := n.eng.ContainerInspect(ctx, first["id"].(string), client.ContainerInspectOptions{})
		Expect(cerrdefs.IsNotFound(err)).To(BeTrue(), "the old container is gone from the engine")
		Expect(sys.List(ctx, "/api/v1/service/record", "id", sys.ServiceID(ctx, web)).Total).To(Equal(2))
		first = second
	})

	It("sees a container killed outside edgeplane restarted by its policy, and one stopped through the engine stay stopped", func() {
		id := first["id"].(string)
		Expect(syscall.Kill(inspect(id).State.Pid, syscall.SIGKILL)).To(Succeed())
		Eventually(func(g Gomega) {
			c := only(g, web)
			g.Expect(c["id"]).To(Equal(id), "restarted in place, not replaced")
			g.Expect(c["restartCnt"]).To(BeNumerically(">=", 1))
			g.Expect(c).To(HaveKeyWithValue("status", "running"))
		}).Should(Succeed())
		Expect(inspect(id).RestartCount).To(BeNumerically(">=", 1))

		timeout := 0
		_, err := n.eng.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &timeout})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) { g.Expect(only(g, web)).To(HaveKeyWithValue("status", "exited")) }).
			WithTimeout(10*time.Second).Should(Succeed(), "seen within seconds")
		Consistently(func(g Gomega) {
			g.Expect(only(g, web)).To(HaveKeyWithValue("status", "exited"))
			g.Expect(inspect(id).State.Running).To(BeFalse())
		}).WithTimeout(3*time.Second).Should(Succeed(), "a user's stop is not undone, by the engine nor by the agent")
	})

	It("adopts its containers when the agent restarts: same ids, no duplicates", func() {
		Expect(sys.Client.Create(ctx, service(cache, "box@1#linux", func(s *edgev1alpha1.EdgeServiceSpec) {
			s.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Network: "none", HealthCmd: []string{"true"}}}
		}))).To(Succeed())
		var before map[string]any
		Eventually(func(g Gomega) {
			before = only(g, cache)
			g.Expect(before).To(HaveKeyWithValue("status", "running"))
		}).Should(Succeed())
		got := inspect(before["id"].(string))
		Expect(string(got.HostConfig.NetworkMode)).To(Equal("none"))
		Expect(got.Config.Healthcheck.Test).To(Equal([]string{"CMD", "true"}))
		ids := managedIDs()
		Expect(ids).To(HaveLen(2))

		n.stopAgent()
		n.startAgent()
		n.listed()
		Consistently(func(g Gomega) {
			g.Expect(managedIDs()).To(Equal(ids))
			g.Expect(only(g, cache)["id"]).To(Equal(before["id"]))
			g.Expect(only(g, web)["id"]).To(Equal(first["id"]))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(only(Default, web)).To(HaveKeyWithValue("status", "exited"), "a stopped container stays stopped after adoption")
	})

	It("fails an instance whose image is missing under pullPolicy Never, saying why", func() {
		Expect(sys.Client.Create(ctx, service(ghost, "ghost@1.0#linux", func(s *edgev1alpha1.EdgeServiceSpec) {
			s.Image.PullPolicy = edgev1alpha1.PullNever
		}))).To(Succeed())
		Eventually(func(g Gomega) {
			c := only(g, ghost)
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "failure"))
			g.Expect(c["failedMessage"]).To(And(ContainSubstring("edgeplane.local/ghost:1.0"), ContainSubstring("not present"), ContainSubstring("Never")))
		}).Should(Succeed())
		Expect(managedIDs()).To(HaveLen(2), "no container for it")
	})

	It("reports its engine unreachable while the engine's service is down, its containers unknown, and the same containers when it is back", func() {
		before := only(Default, cache)
		Expect(before).To(HaveKeyWithValue("status", "running"))
		Expect(n.engine.Down()).To(Succeed())
		Eventually(func(g Gomega) {
			en := &edgev1alpha1.EdgeNode{}
			g.Expect(sys.Client.Get(ctx, ctrlclient.ObjectKey{Name: n.name}, en)).To(Succeed())
			rt := meta.FindStatusCondition(en.Status.Conditions, edgev1alpha1.ConditionRuntimeReady)
			g.Expect(rt).NotTo(BeNil())
			g.Expect(rt.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(rt.Reason).To(Equal(edgev1alpha1.ReasonRuntimeUnreachable))
			g.Expect(en.Status.Status).To(Equal(edgev1alpha1.NodeOnline), "the agent is alive")
			g.Expect(meta.FindStatusCondition(en.Status.Conditions, edgev1alpha1.ConditionReady).Reason).To(Equal(edgev1alpha1.ReasonRuntimeUnreachable))
			c := only(g, cache)
			g.Expect(c).To(HaveKeyWithValue("status", BeNil()), "the contract's unknown state, not the last one seen")
			g.Expect(c["id"]).To(Equal(before["id"]))
		}).WithTimeout(15 * time.Second).Should(Succeed())

		Expect(n.engine.Up()).To(Succeed())
		Eventually(func(g Gomega) {
			c := only(g, cache)
			g.Expect(c).To(HaveKeyWithValue("status", "running"))
			g.Expect(c["id"]).To(Equal(before["id"]), "the same container: the engine kept it")
			en := &edgev1alpha1.EdgeNode{}
			g.Expect(sys.Client.Get(ctx, ctrlclient.ObjectKey{Name: n.name}, en)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(en.Status.Conditions, edgev1alpha1.ConditionRuntimeReady)).To(BeTrue())
			g.Expect(meta.IsStatusConditionTrue(en.Status.Conditions, edgev1alpha1.ConditionReady)).To(BeTrue())
		}).Should(Succeed())
		Expect(managedIDs()).To(HaveLen(2), "nothing created twice")
	})

	It("starts with its link cut and keeps its containers, then applies a change made meanwhile", func() {
		before := only(Default, cache)
		ids := managedIDs()
		n.stopAgent()
		n.proxy.Cut()
		svc := &edgev1alpha1.EdgeService{}
		Expect(sys.Client.Get(ctx, key(cache), svc)).To(Succeed())
		// A patch: the controller writes the status meanwhile, and an update of
		// what was read would conflict with it.
		base := ctrlclient.MergeFrom(svc.DeepCopy())
		svc.Spec.Config.Linux.Env = []string{"MODE=offline-change"}
		Expect(sys.Client.Patch(ctx, svc, base)).To(Succeed())

		n.startAgent()
		n.listed()
		Consistently(func(g Gomega) {
			g.Expect(managedIDs()).To(Equal(ids))
			g.Expect(inspect(before["id"].(string)).State.Running).To(BeTrue())
		}).WithTimeout(4*time.Second).Should(Succeed(), "started from its state file, it keeps what runs")

		n.proxy.Restore()
		Eventually(func(g Gomega) {
			c := only(g, cache)
			g.Expect(c["id"]).NotTo(Equal(before["id"]))
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "success"))
			g.Expect(c).To(HaveKeyWithValue("deployNum", BeNumerically("==", 2)))
			g.Expect(inspect(c["id"].(string)).Config.Env).To(ContainElement("MODE=offline-change"))
		}).Should(Succeed())
		Expect(managedIDs()).To(HaveLen(2), "the old container replaced, not kept beside")
		Expect(sys.List(ctx, "/api/v1/service/record", "id", sys.ServiceID(ctx, cache)).Total).To(Equal(2), "one record for the change, exactly once")
	})

	It("pulls from a private registry with the node's credentials, fails with the registry's reason without them, and uses rotated ones at the next pull", func() {
		reg, err := testregistry.Start(map[string]string{"robot": "right-" + kind}, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reg.Close)
		Expect(reg.PushBox("edgeplane/private", "1", "robot", "right-"+kind)).To(Succeed())
		secret := func(password string) *corev1.Secret {
			auths := fmt.Sprintf(`{"auths":{%q:{"username":"robot","password":%q}}}`, reg.Host, password)
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "regcred-" + kind},
				Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(auths)}}
		}
		Expect(sys.Client.Create(ctx, secret("wrong"))).To(Succeed())
		private := func(name, repo string, policy edgev1alpha1.PullPolicy, refs ...edgev1alpha1.LocalSecretReference) {
			GinkgoHelper()
			Expect(sys.Client.Create(ctx, service(name, "private@1#linux", func(s *edgev1alpha1.EdgeServiceSpec) {
				s.Image.Path, s.Image.PullPolicy, s.Image.PullSecretRefs = reg.Host+"/"+repo, policy, refs
			}))).To(Succeed())
		}
		failsWith := func(name string, reason ...string) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				c := only(g, name)
				g.Expect(c).To(HaveKeyWithValue("deployStatus", "failure"))
				for _, r := range reason {
					g.Expect(strings.ToLower(c["failedMessage"].(string))).To(ContainSubstring(r))
				}
			}).Should(Succeed())
		}
		ref := edgev1alpha1.LocalSecretReference{Name: "regcred-" + kind}

		By("wrong credentials")
		private(secure, "edgeplane/private", edgev1alpha1.PullIfNotPresent, ref)
		failsWith(secure, "unauthorized", reg.Host)

		By("the Secret rotated to the right ones: the next pull uses them")
		Expect(sys.Client.Update(ctx, secret("right-"+kind))).To(Succeed())
		Eventually(func(g Gomega) {
			c := only(g, secure)
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "success"))
			g.Expect(c).To(HaveKeyWithValue("status", "running"))
			g.Expect(inspect(c["id"].(string)).Config.Image).To(Equal(reg.Host + "/edgeplane/private:1"))
		}).WithTimeout(90 * time.Second).Should(Succeed())

		By("no credentials at all")
		private(anonymous, "edgeplane/private", edgev1alpha1.PullAlways)
		failsWith(anonymous, reg.Host)
		Expect(only(Default, anonymous)["failedMessage"]).To(Or(ContainSubstring("unauthorized"), ContainSubstring("no basic auth credentials"), ContainSubstring("authentication required")))

		By("an image the registry does not have")
		private(absent, "edgeplane/absent", edgev1alpha1.PullIfNotPresent, ref)
		failsWith(absent, "edgeplane/absent")
		Expect(strings.ToLower(only(Default, absent)["failedMessage"].(string))).To(Or(ContainSubstring("not found"), ContainSubstring("manifest unknown")))

		for _, name := range []string{secure, anonymous, absent} {
			Expect(sys.Client.Delete(ctx, &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})).To(Succeed())
		}
		Eventually(func() []string { return managedIDs() }).Should(HaveLen(2), "only web and cache are left")
	})

	It("keeps its node online through a pull slower than its grace period, runs another service meanwhile, shows the pull's progress, cuts a stalled pull and succeeds once bytes flow", func() {
		reg, err := testregistry.Start(map[string]string{"robot": "pw-" + kind}, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reg.Close)
		Expect(reg.PushBox("edgeplane/slow", "1", "robot", "pw-"+kind)).To(Succeed())
		// The node reaches the registry through a link the test throttles.
		link, err := testenv.StartProxy(reg.Host)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(link.Close)
		auths := fmt.Sprintf(`{"auths":{%q:{"username":"robot","password":%q}}}`, link.Addr(), "pw-"+kind)
		creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "slowcred-" + kind},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(auths)}}
		Expect(sys.Client.Create(ctx, creds)).To(Succeed())
		slow, local := "slow-"+kind, "local-"+kind
		others := len(managedIDs())

		By("a stalled link: the pull is cut after the progress deadline, and tried again after a back-off")
		link.SetRate(-1)
		Expect(sys.Client.Create(ctx, service(slow, "slow@1#linux", func(s *edgev1alpha1.EdgeServiceSpec) {
			s.Image.Path, s.Image.PullSecretRefs = link.Addr()+"/edgeplane/slow", []edgev1alpha1.LocalSecretReference{{Name: creds.Name}}
		}))).To(Succeed())
		Eventually(func(g Gomega) {
			c := only(g, slow)
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "deploying"))
			g.Expect(c["imagePull"]).To(HaveKeyWithValue("image", link.Addr()+"/edgeplane/slow:1"))
		}).Should(Succeed(), "the facade shows the pull under way")
		Eventually(func(g Gomega) {
			c := only(g, slow)
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "failure"))
			g.Expect(c["failedMessage"]).To(And(ContainSubstring("made no progress for "+pullDeadline.String()+" and was cut"), MatchRegexp(`back-off \d+s, next attempt at \d{4}-`)))
		}).Should(Succeed())
		// The stalled connection goes, as on a link that drops and comes
		// back: an engine that went on waiting on it would finish its pull
		// unseen once bytes flow.
		link.Cut()
		link.Restore()

		By("another service on the node runs meanwhile")
		Expect(sys.Client.Create(ctx, service(local, "box@2#linux", func(s *edgev1alpha1.EdgeServiceSpec) {
			s.Image.PullPolicy = edgev1alpha1.PullNever
		}))).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(only(g, local)).To(HaveKeyWithValue("status", "running")) }).WithTimeout(30 * time.Second).Should(Succeed())

		By(fmt.Sprintf("a slow link: the next attempt takes about %s, longer than the grace period, with the node online and its progress shown", slowPull))
		// The layer is about half of busybox, gzipped.
		bb, err := os.Stat("/bin/busybox")
		Expect(err).NotTo(HaveOccurred())
		link.SetRate(max(bb.Size()/2/int64(slowPull/time.Second), 1<<10))
		progressed, offline, began := false, []any{}, time.Now()
		Eventually(func(g Gomega) {
			if st := sys.List(ctx, "/api/v1/node", "name", n.name).List[0]["status"]; st != "online" {
				offline = append(offline, st)
			}
			c := only(g, slow)
			if p, ok := c["imagePull"].(map[string]any); ok && p["bytesDone"].(float64) > 0 && !progressed {
				svc := &edgev1alpha1.EdgeService{}
				g.Expect(sys.Client.Get(ctx, key(slow), svc)).To(Succeed())
				g.Expect(meta.FindStatusCondition(svc.Status.Conditions, edgev1alpha1.ConditionProgressing).Message).To(ContainSubstring("pulling image "+link.Addr()+"/edgeplane/slow:1 on node "+n.name+": "), "kubectl get es shows it")
				// Only once the service says so too: a poll that saw the
				// bytes but not yet the message polls again.
				progressed = true
			}
			g.Expect(c).To(HaveKeyWithValue("status", "running"))
		}).WithTimeout(2*slowPull + time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		Expect(offline).To(BeEmpty(), "the node stays online while it pulls")
		Expect(progressed).To(BeTrue(), "bytes received were shown, by the facade and in the service's status, while the image was pulled")
		By(fmt.Sprintf("the slow pull took %s to running, the node online throughout", time.Since(began).Round(time.Second)))
		Expect(only(Default, slow)).To(And(HaveKeyWithValue("deployStatus", "success"), HaveKeyWithValue("imagePull", BeNil()), HaveKeyWithValue("failedMessage", BeNil())))

		for _, name := range []string{slow, local} {
			Expect(sys.Client.Delete(ctx, &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})).To(Succeed())
		}
		Eventually(func() []string { return managedIDs() }).Should(HaveLen(others), "only the earlier specs' containers are left")
	})

	It("leaves exactly one container per instance, and no orphan, when the agent is SIGKILLed at random moments of replacements", func() {
		n.stopAgent()
		before := only(Default, cache)
		for i := range kills {
			svc := &edgev1alpha1.EdgeService{}
			Expect(sys.Client.Get(ctx, key(cache), svc)).To(Succeed())
			// A patch: the controller writes the status meanwhile, and an update of
			// what was read would conflict with it.
			base := ctrlclient.MergeFrom(svc.DeepCopy())
			svc.Spec.Config.Linux.Env = []string{fmt.Sprintf("KILL=%d", i)}
			Expect(sys.Client.Patch(ctx, svc, base)).To(Succeed())
			beats, err := testenv.Counter("edgeplane_hub_beats_total")
			Expect(err).NotTo(HaveOccurred())
			proc := n.agentProcess()
			// Once the process runs its node loop (its first Lease
			// renewal, a heartbeat at the hub, right before it lists the
			// engine), somewhere in that list, the old container's stop
			// and removal, or the new one's create and start. Timed from
			// the heartbeat, not from the process's start, which a busy
			// machine makes slow. No other agent beats meanwhile.
			Eventually(func() (float64, error) { return testenv.Counter("edgeplane_hub_beats_total") }).WithPolling(20*time.Millisecond).
				Should(BeNumerically(">", beats), "the agent process beats at the hub")
			time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
			Expect(proc.Process.Kill()).To(Succeed())
			_ = proc.Wait()
		}
		n.startAgent()
		Eventually(func(g Gomega) {
			c := only(g, cache)
			g.Expect(c).To(HaveKeyWithValue("deployStatus", "success"))
			g.Expect(c).To(HaveKeyWithValue("deployNum", BeNumerically("==", before["deployNum"].(float64)+kills)))
			g.Expect(inspect(c["id"].(string)).Config.Env).To(ContainElement(fmt.Sprintf("KILL=%d", kills-1)))
		}).Should(Succeed())
		task := only(Default, cache)["taskId"]
		Consistently(func(g Gomega) {
			res, err := n.eng.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", agent.LabelTaskID+"="+task.(string))})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Items).To(HaveLen(1), "exactly one container for the instance")
			g.Expect(managedIDs()).To(HaveLen(2), "web's and cache's, nothing else")
		}).WithTimeout(3 * time.Second).Should(Succeed())
	})

	It("removes the containers when their services are deleted, and lets the finalizers go", func() {
		for _, name := range []string{web, cache, ghost} {
			Expect(sys.Client.Delete(ctx, &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})).To(Succeed())
		}
		Eventually(func(g Gomega) {
			for _, name := range []string{web, cache, ghost} {
				err := sys.Client.Get(ctx, key(name), &edgev1alpha1.EdgeService{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s is gone", name)
			}
		}).Should(Succeed())
		Expect(managedIDs()).To(BeEmpty())
		_, err := n.eng.ContainerInspect(ctx, "not-ours", client.ContainerInspectOptions{})
		Expect(err).NotTo(HaveOccurred(), "a container edgeplane did not create is never touched")
	})
}

func key(name string) ctrlclient.ObjectKey {
	return ctrlclient.ObjectKey{Namespace: "default", Name: name}
}

// service is a static service on a node.
func service(name, node string, ref edgev1alpha1.ImageRef, mutate func(*edgev1alpha1.EdgeServiceSpec)) *edgev1alpha1.EdgeService {
	s := &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/engine", Image: edgev1alpha1.ImageSpec{Ref: ref, PullPolicy: edgev1alpha1.PullIfNotPresent}, Policy: edgev1alpha1.PolicyStatic}, Nodes: []string{node}},
	}
	if mutate != nil {
		mutate(&s.Spec)
	}
	return s
}

// only is a service's one container, as the facade lists it.
func only(g Gomega, name string) map[string]any {
	var p struct {
		List []map[string]any `json:"list"`
	}
	g.Expect(sys.Call(ctx, http.MethodGet, "/api/v1/container/service?pageSize=-1&serviceIds[]="+sys.ServiceID(ctx, name), nil, &p)).To(Equal(http.StatusOK))
	g.Expect(p.List).To(HaveLen(1))
	return p.List[0]
}

// inspect reads a container from the engine itself.
func inspect(eng *client.Client, id string) container.InspectResponse {
	GinkgoHelper()
	res, err := eng.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	Expect(err).NotTo(HaveOccurred())
	return res.Container
}

// managedIDs are the short ids of the engine's containers that edgeplane
// created for the node.
func managedIDs(eng *client.Client, node string) []string {
	GinkgoHelper()
	res, err := eng.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", agent.LabelNode+"="+node)})
	Expect(err).NotTo(HaveOccurred())
	ids := []string{}
	for _, c := range res.Items {
		ids = append(ids, c.ID[:12])
	}
	return ids
}
