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

// Package records reads DeployRecords as the manager counts them: which
// ones are a service's, and the configuration each holds. The manager and
// kubectl edge both read them here, so that they agree.
package records

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/names"
)

// Of says whether rec is one of the service's records: it holds the
// revision its name says, names the service, and is controlled by it or
// by nothing (an orphan, which the service adopts). Anything else that
// holds a record name is skipped, never trusted.
func Of(svc *edgev1alpha1.EdgeService, rec *edgev1alpha1.DeployRecord) bool {
	if rec.Spec.ServiceName != svc.Name || rec.Name != names.DeployRecord(svc.Name, rec.Spec.Revision) {
		return false
	}
	owner := metav1.GetControllerOf(rec)
	return owner == nil || owner.UID == svc.UID
}

// Config is a deployment configuration as a record keeps it and as two
// are compared: the deployment spec with its pull policy resolved, and
// the node names of a static service, sorted, each once.
type Config struct {
	edgev1alpha1.DeploySpec `json:",inline"`
	Nodes                   []string `json:"nodes,omitempty"`
}

// ConfigOf is the configuration of spec and, for a static service, its
// nodes.
func ConfigOf(spec edgev1alpha1.DeploySpec, staticNodes []string) Config {
	spec.Image.PullPolicy = spec.Image.EffectivePullPolicy()
	c := Config{DeploySpec: spec}
	if spec.Policy != edgev1alpha1.PolicyDynamic {
		c.Nodes = slices.Compact(slices.Sorted(slices.Values(staticNodes)))
	}
	return c
}

// ServiceConfig is the configuration a service's spec asks for.
func ServiceConfig(spec *edgev1alpha1.EdgeServiceSpec) Config {
	return ConfigOf(spec.DeploySpec, spec.Nodes)
}

// RecordConfig is the configuration a record holds.
func RecordConfig(rec *edgev1alpha1.DeployRecord) Config {
	nodes := make([]string, 0, len(rec.Spec.Nodes))
	for _, n := range rec.Spec.Nodes {
		nodes = append(nodes, n.NodeName)
	}
	return ConfigOf(rec.Spec.DeploySpec, nodes)
}

// Restore writes the configuration rec holds into spec: its deployment
// spec and, for a static service, its nodes. It refuses a static
// service's record that lists only some of its nodes (the rest did not
// fit in it), and says whether spec already held that configuration.
func Restore(spec *edgev1alpha1.EdgeServiceSpec, rec *edgev1alpha1.DeployRecord) (changed bool, err error) {
	want := RecordConfig(rec)
	static := want.Policy != edgev1alpha1.PolicyDynamic
	if static && rec.Spec.NodesOmitted > 0 {
		return false, fmt.Errorf("revision %d lists only %d of its %d nodes (the rest did not fit in the record), so its configuration cannot be restored from it",
			rec.Spec.Revision, len(rec.Spec.Nodes), len(rec.Spec.Nodes)+int(rec.Spec.NodesOmitted))
	}
	if equality.Semantic.DeepEqual(ServiceConfig(spec), want) {
		return false, nil
	}
	spec.DeploySpec = *rec.Spec.DeploySpec.DeepCopy()
	if static {
		spec.Nodes = want.Nodes
	}
	return true, nil
}
