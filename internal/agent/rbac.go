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

package agent

import (
	"fmt"
	"strings"

	"github.com/edgeplane/edgeplane/internal/names"
)

// RBAC returns the RBAC manifests for the agent of one node: it may read
// and report only its own EdgeNode, renew only its own Lease and read only
// its own node's credentials Secret. Reading
// EdgeServices cannot be narrowed to a label by RBAC; the agent selects its
// own with the placement label. Registering the EdgeNode needs create,
// which RBAC cannot narrow to a name either: pre-create the node, or grant
// create separately.
func RBAC(node, leaseNamespace, serviceNamespace string) string {
	id := "edge-agent-" + node
	svcScope := "ClusterRole"
	svcNS := ""
	if serviceNamespace != "" {
		svcScope, svcNS = "Role", "\n  namespace: "+serviceNamespace
	}
	svcBindingKind := "ClusterRoleBinding"
	if svcScope == "Role" {
		svcBindingKind = "RoleBinding"
	}
	return strings.TrimLeft(fmt.Sprintf(`
# The agent of node %[1]s; it authenticates as ServiceAccount %[2]s/%[3]s.
# Its services are those labelled %[6]s.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: %[3]s
  namespace: %[2]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[3]s
rules:
- apiGroups: ["edge.edgeplane.io"]
  resources: ["edgenodes"]
  resourceNames: ["%[1]s"]
  verbs: ["get"]
- apiGroups: ["edge.edgeplane.io"]
  resources: ["edgenodes/status"]
  resourceNames: ["%[1]s"]
  verbs: ["get", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[3]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[3]s}
subjects: [{kind: ServiceAccount, name: %[3]s, namespace: %[2]s}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %[3]s
  namespace: %[2]s
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: ["%[1]s"]
  verbs: ["get", "update"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: ["%[1]s"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[3]s
  namespace: %[2]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: %[3]s}
subjects: [{kind: ServiceAccount, name: %[3]s, namespace: %[2]s}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: %[4]s
metadata:
  name: %[3]s-services%[5]s
rules:
- apiGroups: ["edge.edgeplane.io"]
  resources: ["edgeservices"]
  verbs: ["list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: %[7]s
metadata:
  name: %[3]s-services%[5]s
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: %[4]s, name: %[3]s-services}
subjects: [{kind: ServiceAccount, name: %[3]s, namespace: %[2]s}]
`, node, leaseNamespace, id, svcScope, svcNS, names.PlacementLabel(node), svcBindingKind), "\n")
}
