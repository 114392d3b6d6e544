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

package agent

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	acmetav1 "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	acv1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// ApplyStatus applies an agent's half of a node's status by server-side
// apply under FieldOwner: node info (its fields that are known, the
// node's address among them), boot time
// (when set), the RuntimeReady condition (when probed), the containers and
// their counts. The controller's half (liveness, Ready) stays the
// controller's: conditions are a map list, so each writer owns its own.
func ApplyStatus(ctx context.Context, c client.Client, node string, info edgev1alpha1.NodeInfo, bootTime *metav1.Time, runtime *metav1.Condition, containers []edgev1alpha1.ObservedContainer, counts Counts) error {
	ni := acv1alpha1.NodeInfo()
	for _, f := range []struct {
		v   string
		set func(string) *acv1alpha1.NodeInfoApplyConfiguration
	}{{info.Type, ni.WithType}, {info.Arch, ni.WithArch}, {info.Address, ni.WithAddress}, {info.OSVersion, ni.WithOSVersion}, {info.RuntimeVersion, ni.WithRuntimeVersion}, {info.AgentVersion, ni.WithAgentVersion}} {
		if f.v != "" {
			f.set(f.v)
		}
	}
	if info.MaxInstances > 0 {
		ni.WithMaxInstances(info.MaxInstances)
	}
	if info.ReadsAssignment {
		ni.WithReadsAssignment(true)
	}
	st := acv1alpha1.EdgeNodeStatus().WithNodeInfo(ni).
		WithContainerTotal(counts.ContainerTotal).WithContainerRunning(counts.ContainerRunning).
		WithContainerManagedTotal(counts.ContainerManagedTotal).WithContainerManagedRunning(counts.ContainerManagedRunning).
		WithAppTotal(counts.AppTotal).WithAppRunning(counts.AppRunning)
	if bootTime != nil {
		st.WithBootTime(*bootTime)
	}
	if runtime != nil {
		st.WithConditions(acmetav1.Condition().WithType(runtime.Type).WithStatus(runtime.Status).WithReason(runtime.Reason).
			WithMessage(runtime.Message).WithLastTransitionTime(runtime.LastTransitionTime))
	}
	// An empty list is applied as such: the agent owns the list and a
	// node whose containers are all gone reports none.
	st.Containers = make([]acv1alpha1.ObservedContainerApplyConfiguration, 0, len(containers))
	for i := range containers {
		oc, err := observedApply(&containers[i])
		if err != nil {
			return err
		}
		st.WithContainers(oc)
	}
	body, err := json.Marshal(acv1alpha1.EdgeNode(node).WithStatus(st))
	if err != nil {
		return err
	}
	// Without kube-apiserver's strict second parse of the body: the
	// agent's own types wrote it (docs/benchmarks.md).
	return c.Status().Patch(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node}}, client.RawPatch(types.ApplyPatchType, body),
		client.FieldOwner(FieldOwner), client.ForceOwnership, client.FieldValidation(metav1.FieldValidationIgnore))
}

// observedApply is the apply configuration of an observed container: the
// fields it sets, nothing else (the type and its apply configuration share
// one JSON shape, and unset fields are omitted).
func observedApply(o *edgev1alpha1.ObservedContainer) (*acv1alpha1.ObservedContainerApplyConfiguration, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	ac := &acv1alpha1.ObservedContainerApplyConfiguration{}
	return ac, json.Unmarshal(data, ac)
}
