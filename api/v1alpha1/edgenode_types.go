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
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeState says whether an edge node's agent is alive.
// +kubebuilder:validation:Enum=online;offline
type NodeState string

const (
	// NodeOnline means the node's Lease was renewed within the grace period.
	NodeOnline NodeState = "online"
	// NodeOffline means the node's Lease is missing or older than the grace period.
	NodeOffline NodeState = "offline"
)

// ContainerState is the state of a container as the runtime reports it.
// +kubebuilder:validation:Enum=created;running;exited;paused
type ContainerState string

const (
	ContainerCreated ContainerState = "created"
	ContainerRunning ContainerState = "running"
	ContainerExited  ContainerState = "exited"
	ContainerPaused  ContainerState = "paused"
)

// An address, spec.address or status.nodeInfo.address, is host:port of at
// most MaxAddressLength characters; ValidAddress checks one as the schema
// does (its pattern is the CEL rule's), and AddressMessage is the
// schema's refusal, for clients that check before they write.
const (
	MaxAddressLength = 261
	AddressMessage   = "must be host:port, for example 10.0.0.7:8080 or [fd00::7]:8080"
)

var addressPattern = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}$`)

// ValidAddress says whether the schema takes s as a node's address.
func ValidAddress(s string) bool {
	return len(s) <= MaxAddressLength && addressPattern.MatchString(s)
}

// EdgeNodeSpec is what the platform team says about an edge node. Labels on
// the EdgeNode object are used for placement of dynamic services.
type EdgeNodeSpec struct {
	// address is where the node's agent is reached, as host:port. When
	// set, it is the node's address; when not, the address its agent
	// reports in status.nodeInfo.address is. Set it where the agent
	// cannot know how it is reached (behind NAT, a forwarded port).
	// +optional
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\\\\[[0-9A-Fa-f:.]+\\\\]):[0-9]{1,5}$')",message="must be host:port, for example 10.0.0.7:8080 or [fd00::7]:8080"
	Address string `json:"address,omitempty"`

	// tls says whether the agent is reached over TLS.
	// +optional
	TLS bool `json:"tls,omitempty"`

	// type is the expected lowercase operating-system kind, such as linux or
	// sylixos. The agent reports the real one in status.nodeInfo.type.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_-]{0,31}$`
	Type string `json:"type,omitempty"`

	// arch is the expected CPU architecture, such as amd64 or arm64. The agent
	// reports the real one in status.nodeInfo.arch.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]{1,32}$`
	Arch string `json:"arch,omitempty"`

	// maxInstances is how many service instances placement puts on the
	// node, overriding what its agent reports in
	// status.nodeInfo.maxInstances. 0 places no new instance on it (those
	// already there stay). A lower value moves nothing away.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2000
	MaxInstances *int32 `json:"maxInstances,omitempty"`
}

// DefaultMaxInstances is how many instances a node holds when neither its
// spec nor its agent says: the kubelet's default maxPods.
const DefaultMaxInstances = 110

// NodeInfo describes the node as its agent sees it.
type NodeInfo struct {
	// type is the lowercase operating-system kind, such as linux or sylixos.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_-]{0,31}$`
	Type string `json:"type,omitempty"`

	// arch is the CPU architecture, such as amd64 or arm64.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]{1,32}$`
	Arch string `json:"arch,omitempty"`

	// address is where the agent says it is reached, as host:port: its
	// --advertise-address, else the host its connection to the cluster
	// leaves from, with port 7200. spec.address, when set, overrides it.
	// +optional
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\\\\[[0-9A-Fa-f:.]+\\\\]):[0-9]{1,5}$')",message="must be host:port, for example 10.0.0.7:8080 or [fd00::7]:8080"
	Address string `json:"address,omitempty"`

	// osVersion is the version of the operating system.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	OSVersion string `json:"osVersion,omitempty"`

	// runtimeVersion is the version of the container runtime.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	RuntimeVersion string `json:"runtimeVersion,omitempty"`

	// agentVersion is the version of the edge agent.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	AgentVersion string `json:"agentVersion,omitempty"`

	// maxInstances is how many service instances the agent runs and
	// reports (its --max-instances); spec.maxInstances overrides it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2000
	MaxInstances int32 `json:"maxInstances,omitempty"`

	// readsAssignment says the agent reads its instances from the node's
	// NodeAssignment. An agent that predates it reads them from each
	// EdgeService's status.containers, which the manager keeps for it.
	// +optional
	ReadsAssignment bool `json:"readsAssignment,omitempty"`
}

// CPUUsage is a container's CPU use in percent (10 means 10%).
type CPUUsage struct {
	// total is the use over all cores, in percent.
	// +optional
	Total float64 `json:"total"`

	// cores is the use of each core, in percent.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	Cores []float64 `json:"cores,omitempty"`
}

// MemoryUsage is a container's memory use in bytes.
type MemoryUsage struct {
	// limit is the memory limit; 0 means none.
	// +optional
	Limit int64 `json:"limit"`
	// usage is the memory in use now.
	// +optional
	Usage int64 `json:"usage"`
	// maxUsage is the most memory the container has used.
	// +optional
	MaxUsage int64 `json:"maxUsage"`
}

// SizeUsage is a container's disk use in bytes.
type SizeUsage struct {
	// usage is the disk space the container uses.
	// +optional
	Usage int64 `json:"usage"`
	// limit is the disk limit; 0 means none.
	// +optional
	Limit int64 `json:"limit"`
}

// ObservedContainer is one container as the agent observes it on its node.
type ObservedContainer struct {
	// name is the container's name on the node, unique there.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// id is the runtime's container id; on the embedded real-time OS it equals name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ID string `json:"id,omitempty"`

	// taskId links the container to an instance of an EdgeService
	// (status.containers[].taskId there). Empty for containers edgeplane does
	// not manage.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TaskID string `json:"taskId,omitempty"`

	// revision is the service revision the container runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Revision int64 `json:"revision,omitempty"`

	// state is the runtime state; empty means unknown.
	// +optional
	State ContainerState `json:"state,omitempty"`

	// failedMessage says why the agent could not create or start the
	// container at this revision. Empty when it did not fail.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	FailedMessage string `json:"failedMessage,omitempty"`

	// image is the image ref the container runs, as name@tag#os.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Image string `json:"image,omitempty"`

	// imageId is the runtime's id of the image.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	ImageID string `json:"imageId,omitempty"`

	// imageArch is the CPU architecture of the image.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ImageArch string `json:"imageArch,omitempty"`

	// createdTime is when the runtime created the container.
	// +optional
	CreatedTime *metav1.Time `json:"createdTime,omitempty"`

	// startedTime is when the container last started.
	// +optional
	StartedTime *metav1.Time `json:"startedTime,omitempty"`

	// restartCount counts the runtime's own restarts of the container.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RestartCount int32 `json:"restartCount,omitempty"`

	// cpu is the CPU use.
	// +optional
	CPU *CPUUsage `json:"cpu,omitempty"`

	// memory is the memory use.
	// +optional
	Memory *MemoryUsage `json:"memory,omitempty"`

	// size is the disk use.
	// +optional
	Size *SizeUsage `json:"size,omitempty"`

	// imagePull is the pull of the instance's image while the instance
	// waits on it, before its container exists.
	// +optional
	ImagePull *ImagePull `json:"imagePull,omitempty"`
}

// ImagePull is how far the pull of an image has come.
type ImagePull struct {
	// image is the engine's name of the image.
	// +required
	// +kubebuilder:validation:MaxLength=255
	Image string `json:"image"`

	// queued says the pull waits for one of the node's pull slots
	// (the agent's --max-parallel-image-pulls).
	// +optional
	Queued bool `json:"queued,omitempty"`

	// bytesDone is how many bytes of the image's layers have arrived.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BytesDone int64 `json:"bytesDone,omitempty"`

	// bytesTotal is the size of the layers whose size is known so far.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BytesTotal int64 `json:"bytesTotal,omitempty"`
}

// EdgeNodeStatus is the observed state of an edge node. The agent writes
// nodeInfo, bootTime and containers; the controller writes the rest. Each
// writes only its own fields (server-side apply with its own field manager).
type EdgeNodeStatus struct {
	// nodeInfo describes the node. Written by the agent, whole: it is
	// tracked in managedFields as one field.
	// +optional
	// +structType=atomic
	NodeInfo *NodeInfo `json:"nodeInfo,omitempty"`

	// bootTime is when the node booted. Written by the agent.
	// +optional
	BootTime *metav1.Time `json:"bootTime,omitempty"`

	// containers are the containers on the node. Written by the agent, as
	// a whole: an atomic list (as a Pod's containerStatuses), whose
	// server-side applies cost kube-apiserver about half of a map list's
	// and whose managed fields do not grow with it. Names are unique: the
	// engine's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2048
	Containers []ObservedContainer `json:"containers,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// status is online while the node's Lease is fresh, else offline.
	// +optional
	Status NodeState `json:"status,omitempty"`

	// containerTotal counts the containers on the node. The agent writes
	// every count with its containers.
	// +optional
	ContainerTotal int32 `json:"containerTotal,omitempty"`

	// containerRunning counts the containers in state running (total less
	// stopped and paused ones).
	// +optional
	ContainerRunning int32 `json:"containerRunning,omitempty"`

	// containerManagedTotal counts the containers that belong to an EdgeService.
	// +optional
	ContainerManagedTotal int32 `json:"containerManagedTotal,omitempty"`

	// containerManagedRunning counts the running containers that belong to an EdgeService.
	// +optional
	ContainerManagedRunning int32 `json:"containerManagedRunning,omitempty"`

	// appTotal counts the EdgeServices with an instance placed on the node.
	// +optional
	AppTotal int32 `json:"appTotal,omitempty"`

	// appRunning counts the EdgeServices with a running instance on the node.
	// +optional
	AppRunning int32 `json:"appRunning,omitempty"`

	// conditions hold Ready, written by the controller: True while the node
	// is online and its runtime is not reported unreachable; and
	// RuntimeReady, written by the agent: whether its container engine
	// answers.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EdgeNode is an edge node that runs containers for edgeplane. Its agent
// renews a Lease of the same name and reports the node's containers.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=en,categories=edge
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.status.nodeInfo.type`
// +kubebuilder:printcolumn:name="Arch",type=string,JSONPath=`.status.nodeInfo.arch`
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.status.conditions[?(@.type=="RuntimeReady")].reason`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.containerRunning`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.containerTotal`
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.status.nodeInfo.maxInstances`,priority=1
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`,priority=1
// +kubebuilder:printcolumn:name="Reported Address",type=string,JSONPath=`.status.nodeInfo.address`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EdgeNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the platform team says about the node.
	// +required
	Spec EdgeNodeSpec `json:"spec"`

	// status is what the agent and the controller observe.
	// +optional
	Status EdgeNodeStatus `json:"status,omitempty"`
}

// Address is the address the node has: spec.address when set (the
// operator's word wins), else the one its agent reports, else "". The
// facade and DeployRecords carry this one. kubectl get -o wide shows
// both (columns Address and Reported Address): a printer column reads
// one simple JSONPath, with no fallback from one field to another.
func (n *EdgeNode) Address() string {
	if n.Spec.Address != "" {
		return n.Spec.Address
	}
	if n.Status.NodeInfo != nil {
		return n.Status.NodeInfo.Address
	}
	return ""
}

// EdgeNodeList is a list of EdgeNodes.
// +kubebuilder:object:root=true
type EdgeNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EdgeNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EdgeNode{}, &EdgeNodeList{})
}
