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

// Condition types and reasons the controllers write.
const (
	// ConditionReady is True on an EdgeNode while its Lease is fresh.
	ConditionReady = "Ready"
	// ReasonAgentReady: the agent renewed the Lease within the grace period.
	ReasonAgentReady = "AgentReady"
	// ReasonLeaseExpired: the Lease was not renewed within the grace period.
	ReasonLeaseExpired = "LeaseExpired"
	// ReasonLeaseMissing: the node has no Lease; its agent never reported.
	ReasonLeaseMissing = "LeaseMissing"
	// ReasonAgentDisconnected: the agent sent the edge hub no heartbeat
	// within the grace period, and the hub released its Lease.
	ReasonAgentDisconnected = "AgentDisconnected"
	// ReasonHubReplicaLost: the hub replica the node beats at has not
	// renewed its own Lease within the grace period, and the node has not
	// moved to another.
	ReasonHubReplicaLost = "HubReplicaLost"

	// ConditionRuntimeReady is written on an EdgeNode by its agent: True
	// while the node's container engine answers the agent's probe.
	ConditionRuntimeReady = "RuntimeReady"
	// ReasonRuntimeReachable: the engine answered the last probe.
	ReasonRuntimeReachable = "RuntimeReachable"
	// ReasonRuntimeUnreachable: the engine did not answer; the node's
	// containers are in an unknown state. Also the reason of a node's Ready
	// False while its agent is alive but its engine is not.
	ReasonRuntimeUnreachable = "RuntimeUnreachable"

	// ConditionStalled and ConditionReconciling are kstatus' abnormal-true
	// conditions, set beside Ready on every kind the manager reconciles:
	// kstatus (Flux, kpt, cli-utils) reads Reconciling True as InProgress
	// and Stalled True as Failed, and no other condition of a custom
	// resource. Absent means False.
	ConditionStalled     = "Stalled"
	ConditionReconciling = "Reconciling"

	// ConditionAvailable is True on an EdgeService while every instance runs
	// the current revision.
	ConditionAvailable = "Available"
	// ConditionProgressing is True on an EdgeService while instances are
	// being deployed.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True on an EdgeService when an instance failed or
	// could not be placed.
	ConditionDegraded = "Degraded"

	ReasonAllInstancesReady = "AllInstancesReady"
	ReasonInstancesNotReady = "InstancesNotReady"
	ReasonNoInstances       = "NoInstances"
	ReasonDeploying         = "Deploying"
	ReasonRolloutComplete   = "RolloutComplete"
	ReasonDeployFailed      = "DeployFailed"
	ReasonPlacementFailed   = "PlacementFailed"
	ReasonAsExpected        = "AsExpected"
	ReasonDeleting          = "Deleting"

	// ReasonRollingUpdate: a rollout in waves is under way.
	ReasonRollingUpdate = "RollingUpdate"
	// ReasonRolloutPaused: spec.paused holds the rollout where it is.
	ReasonRolloutPaused = "RolloutPaused"
	// ReasonProgressDeadlineExceeded: no instance newly ran the current
	// revision within spec.progressDeadlineSeconds.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonCanaryFailed: an instance of the canary wave failed.
	ReasonCanaryFailed = "CanaryFailed"
	// ReasonRolledBack: autoRollback wrote the last fully deployed
	// configuration back into the spec.
	ReasonRolledBack = "RolledBack"

	// ConditionParentReady is True on a ProvisionTemplate whose parent folder exists.
	ConditionParentReady = "ParentReady"
	ReasonParentExists   = "ParentExists"
	ReasonParentMissing  = "ParentMissing"
	// ReasonChildrenRemain: a folder being deleted waits for its entries.
	ReasonChildrenRemain = "ChildrenRemain"
)

// Annotations and finalizers.
const (
	// AnnotationForceDelete on an EdgeService being deleted removes its
	// finalizer at once, without waiting for agents to remove containers.
	AnnotationForceDelete = "edge.edgeplane.io/force-delete"
	// AnnotationGeneration on a DeployRecord is the service generation it
	// records: a hint for ordering, checked against the service.
	AnnotationGeneration = "edge.edgeplane.io/generation"
	// FinalizerContainers holds an EdgeService until its containers are gone.
	FinalizerContainers = "edge.edgeplane.io/containers"
	// FinalizerChildren holds a folder until its entries are gone.
	FinalizerChildren = "edge.edgeplane.io/children"
)

// A node's registry credentials: a Secret in the Lease namespace, named
// after the node and owned by its EdgeNode, that the manager fills with
// the pull credentials of the services placed on the node, one key per
// service, and that the node's agent alone may read.
const (
	// SecretTypeNodeCredentials is the type of a node's credentials Secret.
	SecretTypeNodeCredentials = "edge.edgeplane.io/node-credentials"
	// LabelNodeCredentials marks a node's credentials Secret with its node.
	LabelNodeCredentials = "edge.edgeplane.io/node-credentials"
)

// NodeCredentialsKey is the key of a service's credentials in its nodes'
// Secrets: namespace_name (neither may contain "_").
func NodeCredentialsKey(namespace, name string) string { return namespace + "_" + name }
