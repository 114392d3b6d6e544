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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
	"github.com/edgeplane/edgeplane/internal/shared/instances"
)

// container is the contract's Container: a service instance joined with
// what the agent of its node reports about it.
type container struct {
	ID     string  `json:"id"`
	TaskID string  `json:"taskId"`
	Name   string  `json:"name"`
	Status *string `json:"status"`
	Uptime int64   `json:"uptime"`
	// Times point into the cached objects: they are written as RFC 3339
	// in UTC, and null when unset or zero.
	StartedTime     *metav1.Time `json:"startedTime"`
	CreatedTime     *metav1.Time `json:"createdTime"`
	TaskCreatedTime int64        `json:"taskCreatedTime"`
	DeployStatus    string       `json:"deployStatus"`
	FailedMessage   *string      `json:"failedMessage"`
	RestartCnt      int32        `json:"restartCnt"`
	DeployNum       int32        `json:"deployNum"`
	CPUUsage        cpuUsage     `json:"cpuUsage"`
	MemoryLimit     int64        `json:"memoryLimit"`
	MemoryUsage     int64        `json:"memoryUsage"`
	MemoryMaxUsage  int64        `json:"memoryMaxUsage"`
	SizeUsage       int64        `json:"sizeUsage"`
	SizeLimit       int64        `json:"sizeLimit"`
	ServiceID       string       `json:"serviceId"`
	ServiceName     string       `json:"serviceName"`
	NodeID          string       `json:"nodeId"`
	Address         string       `json:"address"`
	NodeName        string       `json:"nodeName"`
	NodeArch        string       `json:"nodeArch"`
	ImageID         string       `json:"imageId"`
	ImageName       string       `json:"imageName"`
	ImageVersion    string       `json:"imageVersion"`
	ImageOS         string       `json:"imageOS"`
	ImageArch       string       `json:"imageArch"`
	// ImagePull, beyond the contract: the pull an instance waits on.
	ImagePull *imagePull `json:"imagePull"`
	// Revision, beyond the contract: the service revision the instance
	// is placed at. While a rollout moves in waves, instances of one
	// service run different ones.
	Revision int64 `json:"revision"`
}

// imagePull is how far the pull an instance waits on has come.
type imagePull struct {
	Image      string `json:"image"`
	Queued     bool   `json:"queued"`
	BytesDone  int64  `json:"bytesDone"`
	BytesTotal int64  `json:"bytesTotal"`
}

// cpuUsage's Cores alias the node's report: nothing writes them.
type cpuUsage struct {
	Total float64   `json:"total"`
	Cores []float64 `json:"cores"`
}

// instance is one service instance with its node and what the agent
// reports of it (nil when nothing yet). svc is the service as the node's
// assignment names it, with the configuration the node was told.
type instance struct {
	svc  *edgev1alpha1.EdgeService
	inst *edgev1alpha1.ServiceInstance
	node *edgev1alpha1.EdgeNode // nil when the node is gone
	obs  *edgev1alpha1.ObservedContainer
	// status and failed are where its deployment stands, from obs.
	status edgev1alpha1.DeployStatus
	failed string
}

// join completes an instance with its node (from the facade's node index,
// unless known already; nil when gone) and what the node reports of it.
func (s *Server) join(in *instance) {
	if in.node == nil {
		in.node, _ = s.nodeIndex.object("", in.inst.NodeName)
	}
	in.obs = instances.Observed(in.node, in.inst.TaskID)
	in.status, in.failed = instances.Status(in.inst.Revision, in.svc.Spec.Action, in.obs)
}

// getContainer serves GET /api/v1/container/{id}, id being the taskId.
func (s *Server) getContainer(r *http.Request) (any, error) {
	id := r.PathValue("id")
	assignments := &edgev1alpha1.NodeAssignmentList{}
	if err := s.lookup(r.Context(), assignments, index.AssignmentByTaskID, id, false); err != nil {
		return nil, err
	}
	for i := range assignments.Items {
		for _, in := range assignedInstances(&assignments.Items[i], s.instances.keep) {
			if in.inst.TaskID == id {
				s.join(&in)
				c := toContainer(in, s.opts.Clock.Now())
				return &c, nil
			}
		}
	}
	return nil, notFound("No container has the taskId %q.", id)
}

// listContainersOfServices serves GET /api/v1/container/service.
func (s *Server) listContainersOfServices(r *http.Request) (any, error) {
	return s.listContainers(r, "serviceIds", func(lists [][]instance, id string) [][]instance {
		return append(lists, s.instances.ofService(id))
	})
}

// listContainersOfNodes serves GET /api/v1/container/node.
func (s *Server) listContainersOfNodes(r *http.Request) (any, error) {
	return s.listContainers(r, "nodeIds", func(lists [][]instance, id string) [][]instance {
		for _, n := range s.nodeIndex.get(id) {
			lists = append(lists, s.instances.onNode(n.Name))
		}
		return lists
	})
}

// listContainers reads the ids and paging of a container list, gathers
// the ordered instances of each id and renders the page.
func (s *Server) listContainers(r *http.Request, idsParam string, gather func(lists [][]instance, id string) [][]instance) (any, error) {
	q := r.URL.Query()
	ids, err := parseIDs(q, idsParam)
	if err != nil {
		return nil, err
	}
	p, err := parsePage(q)
	if err != nil {
		return nil, err
	}
	slices.Sort(ids) // an id given twice counts once
	lists := make([][]instance, 0, len(ids))
	for _, id := range slices.Compact(ids) {
		lists = gather(lists, id)
	}
	return s.pageContainers(lists, q.Get("key"), p), nil
}

// pageContainers renders one page of the instances of lists, each in
// order, merged only up to the page's end. A key must see every instance
// joined with its node's report; otherwise the page's instances alone are.
func (s *Server) pageContainers(lists [][]instance, key string, p page) *containerPage {
	var pg pageOf[instance]
	if key != "" {
		var matched []instance
		for in := range merged(lists) {
			if s.join(&in); matchesKey(in, key) {
				matched = append(matched, in)
			}
		}
		pg = paginate(matched, p)
	} else {
		pg = pageOf[instance]{PageNum: p.num, PageSize: p.size}
		for _, l := range lists {
			pg.Total += len(l)
		}
		start, end := p.bounds(pg.Total)
		pg.List = make([]instance, 0, end-start)
		i := 0
		for in := range merged(lists) {
			if i >= end {
				break
			}
			if i >= start {
				pg.List = append(pg.List, in)
			}
			i++
		}
	}
	for i := range pg.List {
		s.join(&pg.List[i])
	}
	return &containerPage{page: pg, now: s.opts.Clock.Now()}
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
	if strings.EqualFold(string(in.status), key) {
		return true
	}
	return in.obs != nil && strings.EqualFold(string(in.obs.State), key)
}

// toContainer renders the contract's Container. It copies nothing: the
// result points into the cached objects, which nothing writes.
func toContainer(in instance, now time.Time) container {
	inst, obs := in.inst, in.obs
	c := container{
		TaskID: inst.TaskID, Name: inst.Name, NodeName: inst.NodeName,
		TaskCreatedTime: inst.TaskCreatedTime.UnixMilli(),
		DeployStatus:    string(in.status), DeployNum: inst.DeployNum, Revision: inst.Revision,
		CPUUsage:  cpuUsage{Cores: noCores},
		ServiceID: string(in.svc.UID), ServiceName: in.svc.Name,
	}
	if c.DeployStatus == "" {
		c.DeployStatus = string(edgev1alpha1.DeployDeploying)
	}
	if in.failed != "" {
		c.FailedMessage = &in.failed
	}
	created := inst.CreatedTime
	ref := string(in.svc.Spec.Image.Ref)
	if obs != nil {
		c.ID, c.RestartCnt, c.ImageID, c.ImageArch = obs.ID, obs.RestartCount, obs.ImageID, obs.ImageArch
		if obs.State != "" {
			c.Status = (*string)(&obs.State)
		}
		if obs.StartedTime != nil {
			c.StartedTime = obs.StartedTime
			if obs.State == edgev1alpha1.ContainerRunning {
				c.Uptime = max(0, int64(now.Sub(obs.StartedTime.Time)/time.Second))
			}
		}
		if created == nil {
			created = obs.CreatedTime
		}
		if obs.CPU != nil {
			c.CPUUsage.Total = obs.CPU.Total
			if obs.CPU.Cores != nil {
				c.CPUUsage.Cores = obs.CPU.Cores
			}
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
		if p := obs.ImagePull; p != nil && obs.Revision == inst.Revision {
			c.ImagePull = &imagePull{Image: p.Image, Queued: p.Queued, BytesDone: p.BytesDone, BytesTotal: p.BytesTotal}
		}
	}
	c.CreatedTime = created
	if r, err := imageref.Parse(ref); err == nil {
		c.ImageName, c.ImageVersion, c.ImageOS = r.Name, r.Tag, r.OS
	} else {
		c.ImageName = ref
	}
	if n := in.node; n != nil {
		c.NodeID, c.Address, c.NodeArch = string(n.UID), n.Address(), nodeArch(n)
		// On the embedded real-time OS the container id is its name.
		if c.ID == "" && nodeType(n) != "" && nodeType(n) != "linux" {
			c.ID = c.Name
		}
	}
	return c
}

// noCores is the cores of a container with no report: an empty list, not
// null. Nothing appends to it.
var noCores = []float64{}
