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
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The objects of the release before NodeAssignment: a service whose status
// lists its instances (and whose labels name its nodes), its record, and an
// agent that reports the container running and reads no assignment.
var _ = Describe("Upgrading from the release before NodeAssignment", Ordered, func() {
	BeforeAll(func() {
		stopManager()
		DeferCleanup(func() { stopManager = startManager(nil) })
	})

	It("keeps every instance and its container, tells the node in its assignment and appends no record", func() {
		ns := newNamespace()
		const node = "upgrade-1"
		createNode(node, "linux", nil)
		keepAlive(node)
		svc := newStatic(ns, "legacy", node)
		svc.Finalizers = []string{edgev1alpha1.FinalizerContainers}
		svc.Labels = map[string]string{names.PlacementLabel(node): ""}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		spec := svc.Spec.DeploySpec
		spec.Image.PullPolicy = spec.Image.EffectivePullPolicy()
		Expect(k8sClient.Create(ctx, &edgev1alpha1.DeployRecord{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy-1",
				Labels:      map[string]string{edgev1alpha1.LabelServiceUID: string(svc.UID)},
				Annotations: map[string]string{edgev1alpha1.AnnotationGeneration: strconv.FormatInt(svc.Generation, 10)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: edgev1alpha1.GroupVersion.String(), Kind: "EdgeService", Name: svc.Name, UID: svc.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: edgev1alpha1.DeployRecordSpec{ServiceName: "legacy", Revision: 1, DeploySpec: spec, Nodes: []edgev1alpha1.RecordNode{{NodeName: node}}},
		})).To(Succeed())
		inst := edgev1alpha1.ServiceInstance{TaskID: "0d9a1c2e-legacy-task", Name: "legacy-7f3k2", NodeName: node, Revision: 1,
			DeployStatus: edgev1alpha1.DeploySuccess, DeployNum: 1, TaskCreatedTime: metav1.NowMicro()}
		patch := client.MergeFrom(svc.DeepCopy())
		svc.Status = edgev1alpha1.EdgeServiceStatus{ObservedGeneration: svc.Generation, Revision: 1, CurrentRecord: "legacy-1", DeployedRevision: 1,
			Replicas: 1, ReadyReplicas: 1, Containers: []edgev1alpha1.ServiceInstance{inst}}
		Expect(k8sClient.Status().Patch(ctx, svc, patch)).To(Succeed())
		// An agent of that release: no readsAssignment.
		Expect(testenv.Report(ctx, k8sClient, node, edgev1alpha1.NodeInfo{Type: "linux", Arch: "amd64", AgentVersion: "earlier"}, nil, running(inst, 1))).To(Succeed())

		By("starting this release's manager")
		// Stopped at the end of the spec: the container's cleanup starts
		// the suite's manager again, and two must never run at once.
		DeferCleanup(startManager(nil))
		key := edgev1alpha1.AssignmentKey(ns, "legacy")
		Eventually(func() []edgev1alpha1.AssignedInstance { return assignment(node).Spec.Services[key].Instances }).Should(
			ConsistOf(And(HaveField("TaskID", inst.TaskID), HaveField("Name", inst.Name), HaveField("Revision", int64(1)), HaveField("DeployNum", int32(1)))),
			"the instance keeps its task id, name and revision: its container is not replaced")
		Expect(assignment(node).Spec.Services[key].Spec.Image.Ref).To(BeEquivalentTo("app@1.0#linux"))
		Consistently(func() []string { return images(records(ns, "legacy")) }, "2s").Should(Equal([]string{"1:app@1.0#linux"}))
		got := getService(ns, "legacy")
		Expect(got.Status.Containers).To(ConsistOf(And(HaveField("TaskID", inst.TaskID), HaveField("DeployStatus", edgev1alpha1.DeploySuccess))),
			"the agent of the earlier release still reads its instance from the status")
		Expect(got.Labels).To(HaveKey(names.PlacementLabel(node)), "and watches its services by this label")
		Expect(got.Status.ReadyReplicas).To(BeEquivalentTo(1))
	})
})
