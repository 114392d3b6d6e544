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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func newStatic(ns, name string, nodes ...string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"}}, Nodes: nodes},
	}
}

func newDynamic(ns, name string, factor int32, selector map[string]string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To(factor), NodeSelector: &metav1.LabelSelector{MatchLabels: selector}}},
	}
}

// waitInstances waits until the service has n instances and returns them.
func waitInstances(svc *edgev1alpha1.EdgeService, n int) []edgev1alpha1.ServiceInstance {
	GinkgoHelper()
	var out []edgev1alpha1.ServiceInstance
	Eventually(func() []edgev1alpha1.ServiceInstance {
		out = instancesOf(svc.Namespace, svc.Name)
		return out
	}).Should(HaveLen(n))
	return out
}
