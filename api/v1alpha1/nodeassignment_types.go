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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AssignedInstance is one instance of a service placed on the node.
type AssignedInstance struct {
	// taskId identifies the instance; fixed when the instance is created.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	TaskID string `json:"taskId"`

	// name is the container's name, unique on the node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// revision is the service revision the instance should run.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Revision int64 `json:"revision,omitempty"`

	// deployNum counts the deployments of this instance.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DeployNum int32 `json:"deployNum,omitempty"`

	// taskCreatedTime is when the instance was created.
	// +optional
	TaskCreatedTime metav1.MicroTime `json:"taskCreatedTime,omitempty"`
}

// AssignedService is one service's part of a node's assignment: the
// deployment configuration its instances run and the instances themselves.
type AssignedService struct {
	// uid is the EdgeService's UID.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid"`

	// revision is the service revision spec describes.
	// +required
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`

	// spec is the service's deployment configuration at revision.
	// +required
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec DeploySpec `json:"spec"`

	// deleting says the service is being deleted: the agent removes its
	// containers, and the manager drops the entry once they are gone.
	// +optional
	Deleting bool `json:"deleting,omitempty"`

	// instances are the service's instances on the node.
	// +optional
	// +listType=map
	// +listMapKey=taskId
	// +kubebuilder:validation:MaxItems=2000
	Instances []AssignedInstance `json:"instances,omitempty"`
}

// NodeAssignmentSpec is what the node should run.
type NodeAssignmentSpec struct {
	// services are the services with instances on the node, by
	// namespace/name. Each service's reconcile writes its own key alone
	// (a JSON patch of that key), so services never conflict. The map
	// is atomic: the controller is its only writer, and managedFields
	// listing every field of every entry was half the object and half of
	// each write's cost (docs/benchmarks.md).
	// +optional
	// +mapType=atomic
	// +kubebuilder:validation:MaxProperties=2000
	Services map[string]AssignedService `json:"services,omitempty"`
}

// NodeAssignment is what one edge node should run: every service instance
// placed on it and one copy of the deployment configuration of each
// service they belong to. It has the name of its EdgeNode, which owns it.
// The manager alone writes it; the node's agent reads it, and only it, by
// name: a service write wakes only the agents of the nodes it runs on, and
// an agent reads nothing of the services it does not run. Internal: no
// user writes it, as no user writes a Deployment's Pods.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=na
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeAssignment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the node should run.
	// +optional
	Spec NodeAssignmentSpec `json:"spec,omitempty"`
}

// NodeAssignmentList is a list of NodeAssignments.
// +kubebuilder:object:root=true
type NodeAssignmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeAssignment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeAssignment{}, &NodeAssignmentList{})
}

// AssignmentKey is a service's key in spec.services of a NodeAssignment.
func AssignmentKey(namespace, name string) string { return namespace + "/" + name }
