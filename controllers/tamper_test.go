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

package controllers_test

import (
	"fmt"
	"math"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// The tamper matrix: people (and restores, and kubectl apply of samples)
// edit or delete the records and status the recording relies on. After each,
// nothing restarts that did not change, and one image change still makes
// exactly one new record, which the status follows.
var _ = Describe("Recording under tampering", func() {
	type tamper struct {
		// before runs ahead of the service's creation.
		before func(ns string)
		// after runs once revision 1 is deployed.
		after func(ns string, svc *edgev1alpha1.EdgeService)
	}
	patchRecord := func(ns, name string, change func(*edgev1alpha1.DeployRecord)) {
		GinkgoHelper()
		rec := &edgev1alpha1.DeployRecord{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rec)).To(Succeed())
		patch := client.MergeFrom(rec.DeepCopy())
		change(rec)
		Expect(k8sClient.Patch(ctx, rec, patch)).To(Succeed())
	}
	byHand := func(ns, name string, rev int64, ref string, labels map[string]string) *edgev1alpha1.DeployRecord {
		return &edgev1alpha1.DeployRecord{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: edgev1alpha1.DeployRecordSpec{ServiceName: "tampered", Revision: rev,
				DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(ref)}}},
		}
	}
	node := 0

	DescribeTable("one image change after the tampering makes exactly one record",
		func(t tamper) {
			node++
			name := fmt.Sprintf("tamper-%d", node)
			createNode(name, "linux", nil)
			keepAlive(name)
			ns := newNamespace()
			if t.before != nil {
				t.before(ns)
			}
			svc := newStatic(ns, "tampered", name)
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())

			By("deploying the first configuration")
			inst := waitInstances(svc, 1)[0]
			report(name, "linux", running(inst, inst.Revision))
			Eventually(func() edgev1alpha1.DeployStatus {
				return instancesOf(ns, "tampered")[0].DeployStatus
			}).Should(Equal(edgev1alpha1.DeploySuccess))
			before := getService(ns, "tampered")
			deployed := instancesOf(ns, "tampered")[0]
			recordsBefore := len(records(ns, "tampered"))

			if t.after != nil {
				By("tampering")
				t.after(ns, before)
			}

			By("restarting nothing whose configuration did not change")
			Consistently(func() edgev1alpha1.ServiceInstance {
				return instancesOf(ns, "tampered")[0]
			}, "2s").Should(And(
				HaveField("Revision", deployed.Revision),
				HaveField("DeployNum", deployed.DeployNum),
				HaveField("DeployStatus", edgev1alpha1.DeploySuccess)))
			Eventually(func() int64 { return getService(ns, "tampered").Status.Revision }).Should(Equal(deployed.Revision))

			By("changing the image once")
			update(svc, setImage("app@2.0#linux"))
			var added edgev1alpha1.DeployRecord
			Eventually(func() []edgev1alpha1.DeployRecord {
				var out []edgev1alpha1.DeployRecord
				for _, r := range records(ns, "tampered") {
					if r.Spec.Image.Ref == "app@2.0#linux" {
						out = append(out, r)
					}
				}
				if len(out) == 1 {
					added = out[0]
				}
				return out
			}, "10s").Should(HaveLen(1))
			Expect(added.Spec.Revision).To(BeNumerically(">", deployed.Revision))
			Expect(added.Labels).To(HaveKeyWithValue(edgev1alpha1.LabelServiceUID, string(svc.UID)))
			Expect(metav1.IsControlledBy(&added, svc)).To(BeTrue())
			Eventually(func() string { return getService(ns, "tampered").Status.CurrentRecord }).Should(Equal(added.Name))
			// The node's assignment is written beside the status, not
			// before it: the instance follows.
			Eventually(func() int64 {
				inst = instancesOf(ns, "tampered")[0]
				return inst.Revision
			}).Should(Equal(added.Spec.Revision))
			report(name, "linux", running(inst, inst.Revision))
			Eventually(func() edgev1alpha1.DeployStatus {
				return instancesOf(ns, "tampered")[0].DeployStatus
			}).Should(Equal(edgev1alpha1.DeploySuccess))
			Consistently(func() int { return len(records(ns, "tampered")) }, "1s").Should(BeNumerically("<=", recordsBefore+2))
		},
		Entry("a record named for revision n+1 that says it is revision n", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				Expect(k8sClient.Create(ctx, byHand(ns, "tampered-2", 1, "app@9#linux",
					map[string]string{edgev1alpha1.LabelServiceUID: string(svc.UID)}))).To(Succeed())
			},
		}),
		Entry("the current record's generation annotation set to the largest int64", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				patchRecord(ns, svc.Status.CurrentRecord, func(r *edgev1alpha1.DeployRecord) {
					r.Annotations[edgev1alpha1.AnnotationGeneration] = strconv.FormatInt(math.MaxInt64, 10)
				})
			},
		}),
		Entry("the current record's service-uid label removed", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				patchRecord(ns, svc.Status.CurrentRecord, func(r *edgev1alpha1.DeployRecord) {
					delete(r.Labels, edgev1alpha1.LabelServiceUID)
				})
			},
		}),
		Entry("a record applied before its service, as kubectl apply -f config/samples/ does", tamper{
			before: func(ns string) {
				Expect(k8sClient.Create(ctx, byHand(ns, "tampered-1", 1, "app@0.9#linux", nil))).To(Succeed())
			},
		}),
		Entry("records left by an earlier service of the same name, deleted with orphaning", tamper{
			before: func(ns string) {
				Expect(k8sClient.Create(ctx, byHand(ns, "tampered-1", 1, "app@0.8#linux",
					map[string]string{edgev1alpha1.LabelServiceUID: "0b6e3c57-0000-4000-8000-000000000000"}))).To(Succeed())
				Expect(k8sClient.Create(ctx, byHand(ns, "tampered-2", 2, "app@0.9#linux",
					map[string]string{edgev1alpha1.LabelServiceUID: "0b6e3c57-0000-4000-8000-000000000000"}))).To(Succeed())
			},
		}),
		Entry("the current record deleted", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				rec := &edgev1alpha1.DeployRecord{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc.Status.CurrentRecord}}
				Expect(k8sClient.Delete(ctx, rec)).To(Succeed())
				Eventually(func() error {
					return k8sClient.Get(ctx, client.ObjectKeyFromObject(rec), rec)
				}).Should(Succeed(), "the record of the running configuration is written again under its revision")
			},
		}),
		Entry("the node's assignment deleted", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				node := svc.Spec.Nodes[0]
				was := assignment(node)
				Expect(k8sClient.Delete(ctx, was)).To(Succeed())
				Eventually(func() edgev1alpha1.AssignedService {
					return assignment(node).Spec.Services[edgev1alpha1.AssignmentKey(ns, svc.Name)]
				}).Should(Equal(was.Spec.Services[edgev1alpha1.AssignmentKey(ns, svc.Name)]), "written again, instance for instance")
			},
		}),
		Entry("the service's entry in the node's assignment edited", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				node, key := svc.Spec.Nodes[0], edgev1alpha1.AssignmentKey(ns, svc.Name)
				was := assignment(node)
				raw := fmt.Sprintf(`{"spec":{"services":{%q:{"spec":{"image":{"ref":"evil@1#linux"}},"instances":[]}}}}`, key)
				Expect(k8sClient.Patch(ctx, was.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(raw)))).To(Succeed())
				Eventually(func() edgev1alpha1.AssignedService {
					return assignment(node).Spec.Services[key]
				}).Should(Equal(was.Spec.Services[key]), "set back to the service's configuration and instances")
			},
		}),
		Entry("every entry of the node's assignment removed by hand", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				node, key := svc.Spec.Nodes[0], edgev1alpha1.AssignmentKey(ns, svc.Name)
				was := assignment(node)
				Expect(k8sClient.Patch(ctx, was.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"services":null}}`)))).To(Succeed())
				Eventually(func() edgev1alpha1.AssignedService {
					return assignment(node).Spec.Services[key]
				}).Should(Equal(was.Spec.Services[key]), "written again into an assignment that holds no services at all")
			},
		}),
		Entry("status.revision patched", tamper{
			after: func(ns string, svc *edgev1alpha1.EdgeService) {
				patch := client.MergeFrom(svc.DeepCopy())
				svc.Status.Revision = 1000
				Expect(k8sClient.Status().Patch(ctx, svc, patch)).To(Succeed())
			},
		}),
	)
})
