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

// FolderPath is an absolute, '/'-separated folder in the path-label tree.
// "/" is the root. Paths are stored in canonical form: no trailing slash,
// no empty, "." or ".." segments, no control characters.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="self == '/' || self.matches('^(/[^/]+)+$')",message="must be an absolute path such as /plant/line-1, with no trailing slash and no empty segment"
// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.]?(/|$)')",message="must not contain . or .. segments"
// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
type FolderPath string

// ImageRef names an image as name@tag#os, for example nginx@1.25#linux or
// sensor/reader@2.0.1#sylixos. The name is lowercase, made of segments
// separated by '/', '.', '_' or '-'; the tag follows the Docker tag grammar;
// os is the lowercase kind of operating system the image runs on.
// +kubebuilder:validation:MaxLength=255
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*@[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}#[a-z][a-z0-9_-]{0,31}$')",message="must have the form name@tag#os, for example nginx@1.25#linux"
type ImageRef string

// PullPolicy says when an edge node pulls the image.
// +kubebuilder:validation:Enum=IfNotPresent;Always;Never
type PullPolicy string

const (
	PullIfNotPresent PullPolicy = "IfNotPresent"
	PullAlways       PullPolicy = "Always"
	PullNever        PullPolicy = "Never"
)

// AutoUpgrade says whether a service follows newer tags of its image.
// +kubebuilder:validation:Enum=Never;Larger
type AutoUpgrade string

const (
	// AutoUpgradeNever keeps the tag the spec names.
	AutoUpgradeNever AutoUpgrade = "Never"
	// AutoUpgradeLarger moves to a larger tag of the same image when one appears.
	AutoUpgradeLarger AutoUpgrade = "Larger"
)

// ImageSpec is the image a service deploys.
type ImageSpec struct {
	// ref is the image as name@tag#os.
	// +required
	Ref ImageRef `json:"ref"`

	// path is where the image is fetched from: a registry repository or a
	// location on the node.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`

	// pullPolicy says when the node pulls the image. Empty means Always for the
	// tag "latest" and IfNotPresent for any other tag; deployment records store
	// the resolved value.
	// +optional
	PullPolicy PullPolicy `json:"pullPolicy,omitempty"`

	// autoUpgrade says whether the service follows newer tags of its image.
	// +optional
	// +kubebuilder:default=Never
	AutoUpgrade AutoUpgrade `json:"autoUpgrade,omitempty"`

	// pullSecretRefs name Secrets of type kubernetes.io/dockerconfigjson in
	// the service's namespace whose credentials pull the image, tried in
	// order per registry. The manager copies them into the Secret of each
	// node the service runs on; an agent reads only its own node's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	PullSecretRefs []LocalSecretReference `json:"pullSecretRefs,omitempty"`
}

// LocalSecretReference names a Secret in the referring object's namespace.
type LocalSecretReference struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// EffectivePullPolicy is the pull policy in force: the one set, or the
// default for the image's tag.
func (i ImageSpec) EffectivePullPolicy() PullPolicy {
	if i.PullPolicy != "" {
		return i.PullPolicy
	}
	if ImageTag(i.Ref) == "latest" {
		return PullAlways
	}
	return PullIfNotPresent
}

// ImageTag returns the tag of an image ref name@tag#os, or "" when it has none.
func ImageTag(ref ImageRef) string {
	s := string(ref)
	at := -1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '@' {
			at = i
			break
		}
	}
	if at < 0 {
		return ""
	}
	tag := s[at+1:]
	for i := 0; i < len(tag); i++ {
		if tag[i] == '#' {
			return tag[:i]
		}
	}
	return tag
}

// RestartPolicy says when the runtime restarts a container that exited.
// +kubebuilder:validation:Enum=no;always;on-failure;unless-stopped
type RestartPolicy string

// ServiceConfig is the runtime configuration of a service's containers: one
// of linux (for Linux images) or embedded (for images of the embedded
// real-time OS).
// +kubebuilder:validation:XValidation:rule="!(has(self.linux) && has(self.embedded))",message="set at most one of linux and embedded"
type ServiceConfig struct {
	// linux configures containers of Linux images.
	// +optional
	Linux *LinuxConfig `json:"linux,omitempty"`

	// embedded configures containers of embedded real-time OS images.
	// +optional
	Embedded *EmbeddedConfig `json:"embedded,omitempty"`
}

// LinuxConfig configures a container on a Linux node.
type LinuxConfig struct {
	// name is the container name on the node. Empty means a name derived from
	// the service and instance.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`

	// hostname is the container's host name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Hostname string `json:"hostname,omitempty"`

	// env holds environment variables as NAME=value.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z_][A-Za-z0-9_]*=`
	// +kubebuilder:validation:items:MaxLength=4096
	Env []string `json:"env,omitempty"`

	// cmd is the container's command and arguments.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Cmd []string `json:"cmd,omitempty"`

	// restart is the restart policy of the container runtime.
	// +optional
	Restart RestartPolicy `json:"restart,omitempty"`

	// network is the network the container joins, for example bridge or host.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Network string `json:"network,omitempty"`

	// memory is the memory limit in bytes; 0 means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Memory int64 `json:"memory,omitempty"`

	// healthCmd is the command the runtime runs to check the container's health.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	HealthCmd []string `json:"healthCmd,omitempty"`
}

// EmbeddedConfig configures a container on a node of the embedded real-time OS.
type EmbeddedConfig struct {
	// name is the container name on the node; on this OS it is also the
	// container's id. Empty means a name derived from the service and instance.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`

	// env holds environment variables as NAME=value.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z_][A-Za-z0-9_]*=`
	// +kubebuilder:validation:items:MaxLength=4096
	Env []string `json:"env,omitempty"`

	// cmd is the command and arguments of the container's main process.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Cmd []string `json:"cmd,omitempty"`

	// restart is the restart policy of the container runtime.
	// +optional
	Restart RestartPolicy `json:"restart,omitempty"`

	// memory is the memory limit in bytes; 0 means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Memory int64 `json:"memory,omitempty"`

	// priority is the scheduling priority of the main process; lower runs first.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	Priority *int32 `json:"priority,omitempty"`
}

// VSOAConfig is the messaging (VSOA) configuration of a service.
type VSOAConfig struct {
	// port is the port the service's VSOA server listens on.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// healthPath is the VSOA URL the node probes for health, such as /health.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	HealthPath string `json:"healthPath,omitempty"`

	// healthIntervalMs is the time between two health probes, in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	HealthIntervalMs int32 `json:"healthIntervalMs,omitempty"`

	// healthTimeoutMs is how long one health probe may take, in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	HealthTimeoutMs int32 `json:"healthTimeoutMs,omitempty"`

	// healthStartDelayMs is how long after start the first probe waits, in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	HealthStartDelayMs int32 `json:"healthStartDelayMs,omitempty"`

	// passwordSecretRef names the key of a Secret, in the service's namespace,
	// that holds the VSOA password. The password is never stored in plain text.
	// +optional
	PasswordSecretRef *SecretKeyRef `json:"passwordSecretRef,omitempty"`
}

// SecretKeyRef names one key of a Secret in the referring object's namespace.
type SecretKeyRef struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the key within the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// DeployAction says what a node does with a service's image.
// +kubebuilder:validation:Enum=run;load
type DeployAction string

const (
	// ActionRun pulls the image and runs containers from it.
	ActionRun DeployAction = "run"
	// ActionLoad only loads the image onto the node.
	ActionLoad DeployAction = "load"
)

// DeployPolicy says how a service's instances are placed.
// +kubebuilder:validation:Enum=static;dynamic
type DeployPolicy string

const (
	// PolicyStatic runs one instance on each node listed in spec.nodes.
	PolicyStatic DeployPolicy = "static"
	// PolicyDynamic runs spec.factor instances on fitting online nodes.
	PolicyDynamic DeployPolicy = "dynamic"
)
