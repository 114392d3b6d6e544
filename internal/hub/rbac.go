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

package hub

// The hub's permissions, which make the hub's own role (config/hub): it
// reads nodes and their assignments, forwards the agents' reports, writes
// node Leases on transitions and its replica's Lease, serves the nodes'
// credentials, and keeps its CA, the join tokens and its info ConfigMap
// in its namespace.
//
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgenodes;nodeassignments,verbs=get;list;watch
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgenodes/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;delete,namespace=edgeplane-node-lease
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch,namespace=edgeplane-node-lease
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;create;update;delete,namespace=edgeplane-system
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;update,namespace=edgeplane-system
