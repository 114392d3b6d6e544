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

package main

import (
	"context"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The users the manager and the simulated agents run as.
const (
	managerUser = "system:serviceaccount:edgeplane-system:edgeplane-manager"
	agentsUser  = "edgeplane-scale-agents"
	// hubUser is the hub's ServiceAccount as config/hub names it:
	// config/flowcontrol puts its Lease writes in leader-election, the
	// built-in service-accounts FlowSchema the rest in workload-low.
	hubUser = "system:serviceaccount:edgeplane-system:edgeplane-hub"
)

// identities writes kubeconfigs of the manager and of the simulated agents
// with the kind of identity each has in a cluster, not an administrator's:
// an administrator (system:masters) is exempt from API Priority and
// Fairness, and with 5,000 nodes kube-apiserver then ran 4,000 requests at
// once, timed most of them out, and never caught up. The manager is
// config/default's ServiceAccount, so config/flowcontrol's FlowSchemas put
// it in workload-high; the agents are in group system:serviceaccounts, so
// the built-in service-accounts FlowSchema puts them in workload-low. Real
// agents are a flow each; the simulator's nodes share one, which queues
// them more than a fleet would be. The hub replicas run as config/hub's
// ServiceAccount: their Lease writes in leader-election, as
// config/flowcontrol puts them, their reports in workload-low. All may do
// anything (RBAC is not what a scale run measures).
func identities(ctx context.Context, env *envtest.Environment, c client.Client, dir string) (managerKubeconfig, agentsKubeconfig, hubKubeconfig string, err error) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "flowcontrol", "flowschema.yaml"))
	if err != nil {
		return "", "", "", err
	}
	// Every FlowSchema of the file: the manager's, and the hub's liveness
	// (its Lease writes in leader-election, as in a cluster).
	schemas, err := testenv.DecodeYAML(raw)
	if err != nil {
		return "", "", "", err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-scale"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: managerUser},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: agentsUser},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: hubUser}}}
	objects := []client.Object{binding}
	for _, fs := range schemas {
		objects = append(objects, fs)
	}
	for _, o := range objects {
		if err := c.Create(ctx, o); err != nil {
			return "", "", "", err
		}
	}
	managerKubeconfig, agentsKubeconfig = filepath.Join(dir, "manager.kubeconfig"), filepath.Join(dir, "agents.kubeconfig")
	hubKubeconfig = filepath.Join(dir, "hub.kubeconfig")
	if err := testenv.WriteUserKubeconfig(env, managerKubeconfig, envtest.User{Name: managerUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:edgeplane-system"}}); err != nil {
		return "", "", "", err
	}
	if err := testenv.WriteUserKubeconfig(env, hubKubeconfig, envtest.User{Name: hubUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:edgeplane-system"}}); err != nil {
		return "", "", "", err
	}
	return managerKubeconfig, agentsKubeconfig, hubKubeconfig, testenv.WriteUserKubeconfig(env, agentsKubeconfig, envtest.User{Name: agentsUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:edgeplane-node-lease"}})
}
