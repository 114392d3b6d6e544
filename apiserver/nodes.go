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

package apiserver

import (
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// node is an item of the node list; basic items carry only id, name, type
// and arch.
type node struct {
	ID                      string   `json:"id"`
	Name                    string   `json:"name"`
	Type                    string   `json:"type"`
	Arch                    string   `json:"arch"`
	Address                 *string  `json:"address,omitempty"`
	Status                  *string  `json:"status,omitempty"`
	TLS                     *bool    `json:"tls,omitempty"`
	ContainerTotal          *int32   `json:"containerTotal,omitempty"`
	ContainerRunning        *int32   `json:"containerRunning,omitempty"`
	ContainerManagedTotal   *int32   `json:"containerManagedTotal,omitempty"`
	ContainerManagedRunning *int32   `json:"containerManagedRunning,omitempty"`
	UpTime                  *float64 `json:"upTime,omitempty"`
	CreatedTime             *string  `json:"createdTime,omitempty"`
	AppTotal                *int32   `json:"appTotal,omitempty"`
	AppRunning              *int32   `json:"appRunning,omitempty"`
	// RuntimeReady is not in the contract: the node's RuntimeReady
	// condition, in full items only, null when the agent reports none.
	// Outer pointer: present or not; inner: true, false or null.
	RuntimeReady **bool `json:"runtimeReady,omitempty"`
}

// listNodes serves GET /api/v1/node: nodes by creation time then name,
// filtered by a case-insensitive substring of the name.
func (s *Server) listNodes(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return nil, err
	}
	basic, err := parseBool(q, "basicInfo")
	if err != nil {
		return nil, err
	}
	names, total := s.nodes.list(q, p)
	out := &nodePage{page: pageOf[*edgev1alpha1.EdgeNode]{List: make([]*edgev1alpha1.EdgeNode, 0, len(names)), Total: total, PageNum: p.num, PageSize: p.size}, basic: basic, now: s.opts.Clock.Now(), s: s}
	for _, name := range names {
		// The cached object itself, read only. The index and the order
		// follow the informer each on its own: one may be a moment behind.
		n, ok := s.nodeIndex.object("", name)
		if !ok {
			n = &edgev1alpha1.EdgeNode{}
			if err := s.cache.Get(r.Context(), client.ObjectKey{Name: name}, n, client.UnsafeDisableDeepCopy); err != nil {
				if apierrors.IsNotFound(err) {
					continue // deleted since the order was read
				}
				return nil, fromKube(err)
			}
		}
		out.page.List = append(out.page.List, n)
	}
	return out, nil
}

func (s *Server) node(n *edgev1alpha1.EdgeNode, basic bool, now time.Time) node {
	item := node{ID: string(n.UID), Name: n.Name, Type: nodeType(n), Arch: nodeArch(n)}
	if basic {
		return item
	}
	st := &n.Status
	status := string(st.Status)
	if status == "" {
		status = string(edgev1alpha1.NodeOffline)
	}
	upTime := 0.0
	if st.Status == edgev1alpha1.NodeOnline && st.BootTime != nil {
		upTime = max(0, now.Sub(st.BootTime.Time).Seconds())
	}
	created := s.formatTime(n.CreationTimestamp.Time)
	address := n.Address()
	item.Address, item.Status, item.TLS = &address, &status, &n.Spec.TLS
	item.ContainerTotal, item.ContainerRunning = &st.ContainerTotal, &st.ContainerRunning
	item.ContainerManagedTotal, item.ContainerManagedRunning = &st.ContainerManagedTotal, &st.ContainerManagedRunning
	item.UpTime, item.CreatedTime = &upTime, &created
	item.AppTotal, item.AppRunning = &st.AppTotal, &st.AppRunning
	item.RuntimeReady = new(runtimeReady(n))
	return item
}

// runtimeReady is the node's RuntimeReady condition: nil when the agent
// reports none (an agent too old to, or none yet), or its status is Unknown.
func runtimeReady(n *edgev1alpha1.EdgeNode) *bool {
	c := meta.FindStatusCondition(n.Status.Conditions, edgev1alpha1.ConditionRuntimeReady)
	if c == nil || c.Status == metav1.ConditionUnknown {
		return nil
	}
	ready := c.Status == metav1.ConditionTrue
	return &ready
}

// nodeType is the OS kind the agent reports, else the spec's hint.
func nodeType(n *edgev1alpha1.EdgeNode) string {
	if n.Status.NodeInfo != nil && n.Status.NodeInfo.Type != "" {
		return n.Status.NodeInfo.Type
	}
	return n.Spec.Type
}

// nodeArch is the architecture the agent reports, else the spec's hint.
func nodeArch(n *edgev1alpha1.EdgeNode) string {
	if n.Status.NodeInfo != nil && n.Status.NodeInfo.Arch != "" {
		return n.Status.NodeInfo.Arch
	}
	return n.Spec.Arch
}

// formatTime formats the contract's yyyy-MM-dd HH:mm:ss in the facade's zone.
func (s *Server) formatTime(t time.Time) string {
	return t.In(s.opts.Location).Format(time.DateTime)
}
