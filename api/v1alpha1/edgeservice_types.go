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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DeployStatus is where the deployment of one instance stands.
// +kubebuilder:validation:Enum=deploying;failure;success
type DeployStatus string

const (
	// DeployDeploying means the instance is not yet running at the current revision.
	DeployDeploying DeployStatus = "deploying"
	// DeployFailure means the agent failed to run the instance at the current revision.
	DeployFailure DeployStatus = "failure"
	// DeploySuccess means the instance runs at the current revision.
	DeploySuccess DeployStatus = "success"
)

// EdgeServiceSpec is the deployment configuration of a service. Every field
// but revisionHistoryLimit, strategy, paused and progressDeadlineSeconds is
// part of the configuration: changing any of them appends one DeployRecord.
// +kubebuilder:validation:XValidation:rule="self.policy != 'static' || (has(self.nodes) && size(self.nodes) > 0)",message="a static service needs at least one node in nodes"
// +kubebuilder:validation:XValidation:rule="self.policy != 'static' || !has(self.factor)",message="factor is for dynamic services; a static service runs one instance on each of its nodes"
// +kubebuilder:validation:XValidation:rule="self.policy != 'dynamic' || (has(self.factor) && self.factor >= 1)",message="a dynamic service needs factor of at least 1"
// +kubebuilder:validation:XValidation:rule="self.policy != 'dynamic' || !has(self.nodes) || size(self.nodes) == 0",message="nodes is for static services; select nodes of a dynamic service with nodeSelector"
// +kubebuilder:validation:XValidation:rule="self.policy != 'static' || !has(self.nodeSelector)",message="nodeSelector is for dynamic services"
type EdgeServiceSpec struct {
	// The deployment configuration, shared with DeployRecord so that a record
	// always holds every field of it.
	DeploySpec `json:",inline"`

	// nodes are the EdgeNode names a static service runs on.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	Nodes []string `json:"nodes,omitempty"`

	// revisionHistoryLimit is how many DeployRecords are kept; older ones are
	// pruned, never the current one. Changing it appends no record.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// strategy is how a new revision reaches the instances: all at once
	// (the default) or in waves. Changing it appends no record.
	// +optional
	Strategy ServiceStrategy `json:"strategy,omitempty"`

	// paused stops a rollout where it is: no further instance moves to
	// the current revision until it is unset. Instances placed while
	// paused run the revision the others run. Changing it appends no
	// record.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// progressDeadlineSeconds is how long a rollout may go without an
	// instance newly running the current revision before it is Stalled
	// (reason ProgressDeadlineExceeded), and rolled back when
	// strategy.autoRollback is set.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// StrategyType is how a new revision reaches a service's instances.
// +kubebuilder:validation:Enum=AllAtOnce;RollingUpdate
type StrategyType string

const (
	// StrategyAllAtOnce moves every instance to a new revision at once.
	StrategyAllAtOnce StrategyType = "AllAtOnce"
	// StrategyRollingUpdate moves instances in waves, node by node,
	// keeping at most maxUnavailable instances unavailable.
	StrategyRollingUpdate StrategyType = "RollingUpdate"
)

// ServiceStrategy is how a new revision reaches a service's instances.
// +kubebuilder:validation:XValidation:rule="self.type == 'RollingUpdate' || !has(self.rollingUpdate)",message="rollingUpdate is for type RollingUpdate"
type ServiceStrategy struct {
	// type is AllAtOnce or RollingUpdate.
	// +optional
	// +kubebuilder:default=AllAtOnce
	Type StrategyType `json:"type,omitempty"`

	// rollingUpdate tunes the waves of a RollingUpdate.
	// +optional
	RollingUpdate *RollingUpdateStrategy `json:"rollingUpdate,omitempty"`

	// autoRollback returns a Stalled rollout to the configuration of the
	// last revision every instance ran (status.deployedRevision), once,
	// by writing it into this spec: a new revision and record, as any
	// change.
	// +optional
	AutoRollback bool `json:"autoRollback,omitempty"`
}

// RollingUpdateStrategy tunes the waves of a rolling update. A node's
// instances of the service move together; a wave is as many nodes as
// the budget allows.
type RollingUpdateStrategy struct {
	// maxUnavailable is how many instances may be unavailable (not
	// running, at any revision) while the rollout moves them: a count or
	// a percent of the instances, rounded down, at least 1. Default 25%.
	// +optional
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^(100|[1-9]?[0-9])%$')",message="a count of at least 1 or a percent from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// canary is a first wave: that many instances (a count, or a percent
	// rounded up) must run the new revision before the rest moves. An
	// instance of it that fails stalls the rollout (reason CanaryFailed).
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="a count of at least 0 or a percent from 0% to 100%"
	Canary *intstr.IntOrString `json:"canary,omitempty"`
}

// ServiceInstance is one instance of a service, placed on one node.
type ServiceInstance struct {
	// taskId identifies the instance; fixed when the instance is created.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	TaskID string `json:"taskId"`

	// name is the container's name, unique on its node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// nodeName is the EdgeNode the instance is placed on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName"`

	// revision is the service revision the instance should run.
	// +optional
	Revision int64 `json:"revision,omitempty"`

	// deployStatus is deploying until the agent reports the container running at
	// revision (success) or failed (failure).
	// +optional
	DeployStatus DeployStatus `json:"deployStatus,omitempty"`

	// failedMessage says why the deployment failed.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	FailedMessage string `json:"failedMessage,omitempty"`

	// deployNum counts the deployments of this instance.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DeployNum int32 `json:"deployNum,omitempty"`

	// taskCreatedTime is when the instance was created.
	// +optional
	TaskCreatedTime metav1.MicroTime `json:"taskCreatedTime,omitempty"`

	// createdTime is when the runtime created the container, as the agent reports it.
	// +optional
	CreatedTime *metav1.Time `json:"createdTime,omitempty"`
}

// FailedInstance is an instance whose deployment failed, and why.
type FailedInstance struct {
	// taskId identifies the instance.
	// +required
	// +kubebuilder:validation:MaxLength=64
	TaskID string `json:"taskId"`

	// name is the container's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// nodeName is the EdgeNode the instance is placed on.
	// +required
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName"`

	// revision is the revision that failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Revision int64 `json:"revision,omitempty"`

	// message is the agent's reason.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
}

// EdgeServiceStatus is the observed state of a service: counts,
// conditions and the revision, whatever the service's size. Its instances
// live with their nodes, in NodeAssignments.
type EdgeServiceStatus struct {
	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// revision is the current revision number: 1 for the first configuration,
	// one more for each change.
	// +optional
	Revision int64 `json:"revision,omitempty"`

	// currentRecord is the name of the DeployRecord of the current revision.
	// +optional
	CurrentRecord string `json:"currentRecord,omitempty"`

	// deployedRevision is the newest revision that every instance ran at
	// once; 0 until the first rollout completes. Its DeployRecord is the
	// one named <service>-<deployedRevision>.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DeployedRevision int64 `json:"deployedRevision,omitempty"`

	// updatedReplicas is the number of instances placed at the current
	// revision; the rest still run an earlier one while a rollout moves
	// in waves or is paused.
	// +optional
	// +kubebuilder:validation:Minimum=0
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// progressTime is when the current rollout last made progress: its
	// start, or an instance newly running the current revision. The
	// progress deadline counts from it.
	// +optional
	ProgressTime *metav1.Time `json:"progressTime,omitempty"`

	// replicas is the number of instances the service should have.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of instances running at the current revision.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// failedReplicas is the number of instances whose deployment at the
	// current revision failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailedReplicas int32 `json:"failedReplicas,omitempty"`

	// failed are up to 20 of the failed instances, with their reasons.
	// Every instance, failed or not, is in its node's NodeAssignment, and
	// its container in the node's status.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	Failed []FailedInstance `json:"failed,omitempty"`

	// containers are the instances on nodes whose agent predates
	// NodeAssignment (status.nodeInfo.readsAssignment unset), which read
	// their instances here; empty once every agent reads its node's
	// assignment. Written whole by the controller alone.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	Containers []ServiceInstance `json:"containers,omitempty"`

	// conditions hold Available, Progressing, Degraded and Ready. Written
	// whole by the controller alone.
	// +optional
	// +listType=atomic
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EdgeService is a service deployed as containers on edge nodes.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.factor,statuspath=.status.replicas
// +kubebuilder:resource:shortName=es,categories=edge
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=`.status.updatedReplicas`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].message`
// +kubebuilder:printcolumn:name="Deployed",type=integer,JSONPath=`.status.deployedRevision`,priority=1
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image.ref`,priority=1
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EdgeService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the deployment configuration.
	// +required
	Spec EdgeServiceSpec `json:"spec"`

	// status is the observed state. The controller is its only writer,
	// so managedFields track it as one field.
	// +optional
	// +structType=atomic
	Status EdgeServiceStatus `json:"status,omitempty"`
}

// EdgeServiceList is a list of EdgeServices.
// +kubebuilder:object:root=true
type EdgeServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EdgeService `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EdgeService{}, &EdgeServiceList{})
}
