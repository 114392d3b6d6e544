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

// MaxFactor is the largest factor the schema accepts (the Maximum marker
// on factor says the same).
const MaxFactor = 10000

// DeploySpec is a service's deployment configuration as EdgeService and
// DeployRecord both hold it. A field added here is recorded by construction.
// The node list of a static service is the one part kept apart: a service
// names its nodes, a record the nodes the revision was placed on.
type DeploySpec struct {
	// path is the service's folder in the path-label tree.
	// +optional
	// +kubebuilder:default="/"
	Path FolderPath `json:"path,omitempty"`

	// image is the image the service deploys. A record holds it with the
	// pull policy resolved.
	// +required
	Image ImageSpec `json:"image"`

	// action says whether nodes run the image or only load it.
	// +optional
	// +kubebuilder:default=run
	Action DeployAction `json:"action,omitempty"`

	// cmd is the container start command and arguments.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Cmd []string `json:"cmd,omitempty"`

	// config is the runtime configuration of the service's containers.
	// +optional
	Config *ServiceConfig `json:"config,omitempty"`

	// vsoa is the messaging configuration.
	// +optional
	VSOA *VSOAConfig `json:"vsoa,omitempty"`

	// policy says how instances are placed: static runs one instance on each
	// node in nodes; dynamic runs factor instances spread over online nodes
	// that fit the image and match nodeSelector.
	// +optional
	// +kubebuilder:default=static
	Policy DeployPolicy `json:"policy,omitempty"`

	// nodeSelector narrows the nodes a dynamic service may run on by their labels.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// factor is the number of instances of a dynamic service. The scale
	// subresource reads and writes it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Factor *int32 `json:"factor,omitempty"`
}
