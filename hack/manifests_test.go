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

package hack

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestDefaultManifestIsAccepted renders config/default with kubectl kustomize
// and has a real kube-apiserver accept every object by server-side dry-run.
func TestDefaultManifestIsAccepted(t *testing.T) {
	env, _, c, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	out, err := exec.Command(filepath.Join(env.BinaryAssetsDirectory, "kubectl"), "kustomize", filepath.Join(testenv.RepoRoot(), "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}

	kinds := map[string]int{}
	objs, err := testenv.DecodeYAML(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, u := range objs {
		kinds[u.GetKind()]++
		if u.GetKind() == "Namespace" {
			// Later namespaced objects need it to exist; a dry run would not create it.
			if err := c.Create(ctx, u); err != nil {
				t.Fatalf("create Namespace %s: %v", u.GetName(), err)
			}
			continue
		}
		u.SetManagedFields(nil)
		if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("test"), client.DryRunAll, client.ForceOwnership); err != nil {
			t.Errorf("server-side dry-run of %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for kind, n := range map[string]int{
		// The manager and the edge hub, each with its ServiceAccount.
		"CustomResourceDefinition": 5, "Namespace": 2, "Deployment": 2, "ServiceAccount": 2,
		// The manager's, the metrics reader's, the three facade client
		// roles and the hub's; the manager's and the hub's bindings and
		// both system:auth-delegator's.
		"ClusterRole": 6, "ClusterRoleBinding": 4,
		// Leader election; Leases in the Lease namespace; the facade's
		// writes and its join tokens in the hub's namespace; the hub's in
		// the Lease namespace and its own; and the binding to
		// extension-apiserver-authentication-reader.
		"Role": 6, "RoleBinding": 7,
		// The facade directly, through kube-apiserver, and metrics; the
		// hub and its metrics.
		"Service": 5, "APIService": 1, "PodDisruptionBudget": 2, "NetworkPolicy": 4,
		"ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1,
		// The finalizer of a service put on at its creation.
		"MutatingAdmissionPolicy": 1, "MutatingAdmissionPolicyBinding": 1,
		// The manager's requests in workload-high.
		"FlowSchema": 2,
	} {
		if kinds[kind] != n {
			t.Errorf("config/default renders %d %s, want %d", kinds[kind], kind, n)
		}
	}
}
