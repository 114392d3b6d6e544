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

// LabelServiceUID labels every DeployRecord with the UID of its EdgeService.
const LabelServiceUID = "edge.edgeplane.io/service-uid"

// RecordNode is a node a revision was placed on, as it was at that time.
type RecordNode struct {
	// nodeId is the EdgeNode's UID.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	NodeID string `json:"nodeId,omitempty"`

	// nodeName is the EdgeNode's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName"`

	// address is the node's address, host:port.
	// +optional
	// +kubebuilder:validation:MaxLength=261
	Address string `json:"address,omitempty"`
}

// DeployRecordSpec is a snapshot of a service's deployment configuration at
// one revision. It never changes once written.
type DeployRecordSpec struct {
	// serviceName is the name of the EdgeService.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ServiceName string `json:"serviceName"`

	// revision is the service revision this record describes, from 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`

	// The configuration of this revision, field for field as the service
	// held it.
	DeploySpec `json:",inline"`

	// nodes are the nodes the revision was placed on when it was recorded,
	// by name: the first of them, up to about 256 KiB (2,000 nodes of
	// typical names), so that a record of the largest configuration still
	// fits in etcd.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	Nodes []RecordNode `json:"nodes,omitempty"`

	// nodesOmitted counts the nodes the revision was placed on beyond
	// those nodes lists.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodesOmitted int32 `json:"nodesOmitted,omitempty"`
}

// DeployRecord is one entry of a service's deployment log: the configuration
// of one revision. The EdgeService controller appends one for every change of
// the configuration and owns it. Like a ControllerRevision it has no status
// and is never written again: which revision every instance runs is the
// service's status.deployedRevision, written with the instances it follows.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=dr,categories=edge
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.serviceName`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.spec.revision`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image.ref`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DeployRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the recorded configuration; it is immutable. It is tracked
	// in managedFields as one field: its creator is its only writer.
	// +required
	// +structType=atomic
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="DeployRecord spec is immutable"
	Spec DeployRecordSpec `json:"spec"`
}

// DeployRecordList is a list of DeployRecords.
// +kubebuilder:object:root=true
type DeployRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DeployRecord `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DeployRecord{}, &DeployRecordList{})
}
