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

// TemplateType says whether a ProvisionTemplate is a folder or a template.
// +kubebuilder:validation:Enum=folder;template
type TemplateType string

const (
	// TypeFolder is a folder of the path-label tree.
	TypeFolder TemplateType = "folder"
	// TypeTemplate is a resource template built from an image.
	TypeTemplate TemplateType = "template"
)

// ServiceDefaults are the settings a service made from a template starts with.
type ServiceDefaults struct {
	// action is run or load.
	// +optional
	Action DeployAction `json:"action,omitempty"`

	// cmd is the container start command and arguments.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Cmd []string `json:"cmd,omitempty"`

	// config is the runtime configuration.
	// +optional
	Config *ServiceConfig `json:"config,omitempty"`

	// vsoa is the messaging configuration.
	// +optional
	VSOA *VSOAConfig `json:"vsoa,omitempty"`

	// pullPolicy is the image pull policy.
	// +optional
	PullPolicy PullPolicy `json:"pullPolicy,omitempty"`

	// autoUpgrade is the auto-upgrade policy.
	// +optional
	AutoUpgrade AutoUpgrade `json:"autoUpgrade,omitempty"`
}

// ProvisionTemplateSpec places a folder or a template in the path-label tree.
// The object's name is derived from path and name, so one folder cannot hold
// two entries of one name.
// +kubebuilder:validation:XValidation:rule="self.type != 'template' || has(self.imageRef)",message="a template needs imageRef"
// +kubebuilder:validation:XValidation:rule="self.type != 'folder' || (!has(self.imageRef) && !has(self.defaults))",message="a folder has no imageRef or defaults"
type ProvisionTemplateSpec struct {
	// type is folder or template. It cannot change.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type TemplateType `json:"type"`

	// name is the entry's name within its folder. It cannot change.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') && self != '.' && self != '..' && !self.matches('[[:cntrl:]]')",message="must be a single path segment: no '/', control characters, '.' or '..'"
	Name string `json:"name"`

	// path is the parent folder. It cannot change.
	// +optional
	// +kubebuilder:default="/"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="path is immutable"
	Path FolderPath `json:"path,omitempty"`

	// imageRef is the image a template is built from, as name@tag#os.
	// +optional
	ImageRef ImageRef `json:"imageRef,omitempty"`

	// defaults are the settings a service made from the template starts with.
	// +optional
	Defaults *ServiceDefaults `json:"defaults,omitempty"`
}

// ProvisionTemplateStatus is the observed state of a tree entry.
type ProvisionTemplateStatus struct {
	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// children counts the entries directly inside a folder.
	// +optional
	Children int32 `json:"children,omitempty"`

	// conditions hold ParentReady: True when the parent folder exists.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProvisionTemplate is a folder or a resource template of the path-label tree.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pt,categories=edge
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.imageRef`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ProvisionTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec places the entry in the tree.
	// +required
	Spec ProvisionTemplateSpec `json:"spec"`

	// status is the observed state.
	// +optional
	Status ProvisionTemplateStatus `json:"status,omitempty"`
}

// ProvisionTemplateList is a list of ProvisionTemplates.
// +kubebuilder:object:root=true
type ProvisionTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisionTemplate `json:"items"`
}

// ServiceSpec is the spec a template gives a new service: its folder,
// image and defaults, static on nodes when there are any, else dynamic
// with factor instances.
func (t *ProvisionTemplate) ServiceSpec(nodes []string, factor *int32) EdgeServiceSpec {
	var spec EdgeServiceSpec
	if len(nodes) > 0 {
		spec.Policy, spec.Nodes = PolicyStatic, nodes
	} else {
		spec.Policy, spec.Factor = PolicyDynamic, factor
	}
	spec.Path = t.Spec.Path
	spec.Image.Ref = t.Spec.ImageRef
	if d := t.Spec.Defaults; d != nil {
		d = d.DeepCopy()
		spec.Action, spec.Cmd, spec.Config, spec.VSOA = d.Action, d.Cmd, d.Config, d.VSOA
		spec.Image.PullPolicy, spec.Image.AutoUpgrade = d.PullPolicy, d.AutoUpgrade
	}
	return spec
}

func init() {
	SchemeBuilder.Register(&ProvisionTemplate{}, &ProvisionTemplateList{})
}
