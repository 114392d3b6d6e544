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
	"slices"
	"strings"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/imageref"
	"github.com/edgeplane/edgeplane/internal/index"
)

// container is the contract's Container: a service instance joined with
// what the agent of its node reports about it.
type container struct {
	ID              string   `json:"id"`
	TaskID          string   `json:"taskId"`
	Name            string   `json:"name"`
	Status          *string  `json:"status"`
	Uptime          int64    `json:"uptime"`
	StartedTime     *string  `json:"startedTime"`
	CreatedTime     *string  `json:"createdTime"`
	TaskCreatedTime int64    `json:"taskCreatedTime"`
	DeployStatus    string   `json:"deployStatus"`
	FailedMessage   *string  `json:"failedMessage"`
	RestartCnt      int32    `json:"restartCnt"`
	DeployNum       int32    `json:"deployNum"`
	CPUUsage        cpuUsage `json:"cpuUsage"`
	MemoryLimit     int64    `json:"memoryLimit"`
	MemoryUsage     int64    `json:"memoryUsage"`
	MemoryMaxUsage  int64    `json:"memoryMaxUsage"`
	SizeUsage       int64    `json:"sizeUsage"`
	SizeLimit       int64    `json:"sizeLimit"`
	ServiceID       string   `json:"serviceId"`
	ServiceName     string   `json:"serviceName"`
	NodeID          string   `json:"nodeId"`
	Address         string   `json:"address"`
	NodeName        string   `json:"nodeName"`
	NodeArch        string   `json:"nodeArch"`
	ImageID         string   `json:"imageId"`
	ImageName       string   `json:"imageName"`
	ImageVersion    string   `json:"imageVersion"`
	ImageOS         string   `json:"imageOS"`
	ImageArch       string   `json:"imageArch"`
}

type cpuUsage struct {
	Total float64   `json:"total"`
	Cores []float64 `json:"cores"`
}

// instance is one service instance with its node and what the agent
// reports of it (nil when nothing yet).
type instance struct {
	svc  *edgev1alpha1.EdgeService
	inst *edgev1alpha1.ServiceInstance
	node *edgev1alpha1.EdgeNode // nil when the node is gone
	obs  *edgev1alpha1.ObservedContainer
}

// observedTask finds what a node's agent reports for a task: a scan of the
// node's few containers costs less than a map of them per request.
func observedTask(n *edgev1alpha1.EdgeNode, taskID string) *edgev1alpha1.ObservedContainer {
	if n == nil {
		return nil
	}
	for i := range n.Status.Containers {
		if c := &n.Status.Containers[i]; c.TaskID == taskID {
			return c
		}
	}
	return nil
}

// join completes an instance with its node (from the facade's node index,
// unless known already; nil when gone) and what the node reports of it.
func (s *Server) join(in *instance) {
	if in.node == nil {
		in.node, _ = s.nodesByUID.object("", in.inst.NodeName)
	}
	in.obs = observedTask(in.node, in.inst.TaskID)
}

// getContainer serves GET /api/v1/container/{id}, id being the taskId.
func (s *Server) getContainer(r *http.Request) (any, error) {
	id := r.PathValue("id")
	services := &edgev1alpha1.EdgeServiceList{}
	if err := s.lookup(r.Context(), services, index.ServiceByTaskID, id, true); err != nil {
		return nil, err
	}
	for i := range services.Items {
		svc := &services.Items[i]
		for j := range svc.Status.Containers {
			if svc.Status.Containers[j].TaskID == id {
				in := instance{svc: svc, inst: &svc.Status.Containers[j]}
				s.join(&in)
				return s.container(in, s.opts.Clock.Now()), nil
			}
		}
	}
	return nil, notFound("No container has the taskId %q.", id)
}

// listContainersOfServices serves GET /api/v1/container/service.
func (s *Server) listContainersOfServices(r *http.Request) (any, error) {
	return s.listContainers(r, "serviceIds", func(found []instance, id string) []instance {
		return appendInstances(found, s.servicesByUID.get(id), nil)
	})
}

// listContainersOfNodes serves GET /api/v1/container/node.
func (s *Server) listContainersOfNodes(r *http.Request) (any, error) {
	return s.listContainers(r, "nodeIds", func(found []instance, id string) []instance {
		for _, n := range s.nodesByUID.get(id) {
			found = appendInstances(found, s.servicesByNode.get(n.Name), n)
		}
		return found
	})
}

// listContainers reads the ids and paging of a container list, gathers the
// instances of each id and renders the page.
func (s *Server) listContainers(r *http.Request, idsParam string, gather func(found []instance, id string) []instance) (any, error) {
	q := r.URL.Query()
	ids, err := parseIDs(q, idsParam)
	if err != nil {
		return nil, err
	}
	p, err := parsePage(q)
	if err != nil {
		return nil, err
	}
	found := make([]instance, 0, 64)
	for _, id := range unique(ids) {
		found = gather(found, id)
	}
	return s.pageContainers(found, q.Get("key"), p), nil
}

// appendInstances appends the instances of services to out, only those on
// node when it is given. Nodes and reports are joined later, for the page
// alone.
func appendInstances(out []instance, services []*edgev1alpha1.EdgeService, node *edgev1alpha1.EdgeNode) []instance {
	for _, svc := range services {
		for j := range svc.Status.Containers {
			if node != nil && svc.Status.Containers[j].NodeName != node.Name {
				continue
			}
			out = append(out, instance{svc: svc, inst: &svc.Status.Containers[j], node: node})
		}
	}
	return out
}

// pageContainers filters instances by key, orders them newest task first
// and renders one page. Only a key needs every instance joined with its
// node's report; otherwise the page's instances alone are.
func (s *Server) pageContainers(found []instance, key string, p page) *containerPage {
	if key != "" {
		kept := found[:0]
		for _, in := range found {
			s.join(&in)
			if matchesKey(in, key) {
				kept = append(kept, in)
			}
		}
		found = kept
	}
	slices.SortFunc(found, func(x, y instance) int {
		a, b := x.inst, y.inst
		if c := b.TaskCreatedTime.Time.Compare(a.TaskCreatedTime.Time); c != 0 {
			return c
		}
		return strings.Compare(a.TaskID, b.TaskID)
	})
	pg := paginate(found, p)
	out := &containerPage{List: make([]container, 0, len(pg.List)), Total: pg.Total, PageNum: pg.PageNum, PageSize: pg.PageSize}
	now := s.opts.Clock.Now()
	for _, in := range pg.List {
		s.join(&in)
		out.List = append(out.List, s.container(in, now))
	}
	return out
}

// matchesKey matches key as a case-insensitive substring of the node,
// container or service name, or exactly a status or deploy status.
func matchesKey(in instance, key string) bool {
	k := strings.ToLower(key)
	for _, name := range []string{in.inst.NodeName, in.inst.Name, in.svc.Name} {
		if strings.Contains(strings.ToLower(name), k) {
			return true
		}
	}
	if strings.EqualFold(string(in.inst.DeployStatus), key) {
		return true
	}
	return in.obs != nil && strings.EqualFold(string(in.obs.State), key)
}

func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// container renders the contract's Container.
func (s *Server) container(in instance, now time.Time) container {
	inst, obs := in.inst, in.obs
	c := container{
		TaskID: inst.TaskID, Name: inst.Name, NodeName: inst.NodeName,
		TaskCreatedTime: inst.TaskCreatedTime.UnixMilli(),
		DeployStatus:    string(inst.DeployStatus), DeployNum: inst.DeployNum,
		CPUUsage:  cpuUsage{Cores: []float64{}},
		ServiceID: string(in.svc.UID), ServiceName: in.svc.Name,
	}
	if c.DeployStatus == "" {
		c.DeployStatus = string(edgev1alpha1.DeployDeploying)
	}
	if inst.FailedMessage != "" {
		c.FailedMessage = &inst.FailedMessage
	}
	created := inst.CreatedTime
	ref := string(in.svc.Spec.Image.Ref)
	if obs != nil {
		c.ID, c.RestartCnt, c.ImageID, c.ImageArch = obs.ID, obs.RestartCount, obs.ImageID, obs.ImageArch
		if obs.State != "" {
			state := string(obs.State)
			c.Status = &state
		}
		if obs.StartedTime != nil {
			c.StartedTime = rfc3339(obs.StartedTime.Time)
			if obs.State == edgev1alpha1.ContainerRunning {
				c.Uptime = max(0, int64(now.Sub(obs.StartedTime.Time)/time.Second))
			}
		}
		if created == nil {
			created = obs.CreatedTime
		}
		if obs.CPU != nil {
			c.CPUUsage.Total = obs.CPU.Total
			c.CPUUsage.Cores = append(c.CPUUsage.Cores, obs.CPU.Cores...)
		}
		if m := obs.Memory; m != nil {
			c.MemoryLimit, c.MemoryUsage, c.MemoryMaxUsage = m.Limit, m.Usage, m.MaxUsage
		}
		if sz := obs.Size; sz != nil {
			c.SizeUsage, c.SizeLimit = sz.Usage, sz.Limit
		}
		if obs.Image != "" {
			ref = obs.Image // the image the container actually runs
		}
	}
	if created != nil {
		c.CreatedTime = rfc3339(created.Time)
	}
	if r, err := imageref.Parse(ref); err == nil {
		c.ImageName, c.ImageVersion, c.ImageOS = r.Name, r.Tag, r.OS
	} else {
		c.ImageName = ref
	}
	if n := in.node; n != nil {
		c.NodeID, c.Address, c.NodeArch = string(n.UID), n.Spec.Address, nodeArch(n)
		// On the embedded real-time OS the container id is its name.
		if c.ID == "" && nodeType(n) != "" && nodeType(n) != "linux" {
			c.ID = c.Name
		}
	}
	return c
}

func rfc3339(t time.Time) *string {
	s := t.UTC().Format(time.RFC3339)
	return &s
}
