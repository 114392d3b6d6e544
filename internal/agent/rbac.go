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
)

// RBAC returns the RBAC manifests for the agent of one node: it may read
// only its own node's assignment (what it runs, with the configuration of
// each service it runs, and nothing of any other service), read and
// report only its own EdgeNode, renew only its own Lease and read only its
// own node's credentials Secret. Registering the EdgeNode needs create,
// which RBAC cannot narrow to a name: pre-create the node, or grant create
// separately.
func RBAC(node, leaseNamespace string) string {
	id := "edge-agent-" + node
	return strings.TrimLeft(fmt.Sprintf(`
# The agent of node %[1]s; it authenticates as ServiceAccount %[2]s/%[3]s.
# It lists and watches its NodeAssignment by name (a metadata.name field
# selector), which resourceNames allow.
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
  resources: ["nodeassignments"]
  resourceNames: ["%[1]s"]
  verbs: ["get", "list", "watch"]
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
`, node, leaseNamespace, id), "\n")
}
