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
	"strings"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
)

// recordNode is an entry of a record's nodeList.
type recordNode struct {
	NodeID   string `json:"nodeId"`
	NodeName string `json:"nodeName"`
	Address  string `json:"address"`
}

// recordItem is an item of the record list.
type recordItem struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Image       string       `json:"image"`
	Cmd         []string     `json:"cmd"`
	CreatedTime string       `json:"createdTime"`
	NodeList    []recordNode `json:"nodeList"`
	// NodesOmitted is beyond the contract: the nodes the record leaves out.
	NodesOmitted int32 `json:"nodesOmitted,omitempty"`
}

// recordDetail is the record-detail response.
type recordDetail struct {
	ID          string       `json:"id"`
	Action      string       `json:"action"`
	Cmd         []string     `json:"cmd"`
	Config      any          `json:"config"`
	Name        string       `json:"name"`
	VSOA        any          `json:"vsoa"`
	NodeList    []recordNode `json:"nodeList"`
	Image       recordImage  `json:"image"`
	CreatedTime string       `json:"createdTime"`
	Policy      string       `json:"policy"`
	Factor      int32        `json:"factor"`
	// NodesOmitted is beyond the contract: the nodes the record leaves out.
	NodesOmitted int32 `json:"nodesOmitted,omitempty"`
}

type recordImage struct {
	ID          string `json:"id"`
	Ref         string `json:"ref"`
	Path        string `json:"path"`
	PullPolicy  string `json:"pullPolicy"`
	AutoUpgrade string `json:"autoUpgrade"`
}

// vsoa is the messaging configuration as the contract shows it; the
// password stays in its Secret.
type vsoa struct {
	Port               int32  `json:"port"`
	HealthPath         string `json:"healthPath"`
	HealthIntervalMs   int32  `json:"healthIntervalMs"`
	HealthTimeoutMs    int32  `json:"healthTimeoutMs"`
	HealthStartDelayMs int32  `json:"healthStartDelayMs"`
}

// linuxConfig and embeddedConfig are the two config kinds as the contract
// shows them: every key always present, empty when unset, so that a client
// can read config.env without checking for it first.
type linuxConfig struct {
	Hostname  string   `json:"hostname"`
	Env       []string `json:"env"`
	Cmd       []string `json:"cmd"`
	Name      string   `json:"name"`
	Restart   string   `json:"restart"`
	Network   string   `json:"network"`
	Memory    int64    `json:"memory"`
	HealthCmd []string `json:"healthCmd"`
}

type embeddedConfig struct {
	Name     string   `json:"name"`
	Env      []string `json:"env"`
	Cmd      []string `json:"cmd"`
	Restart  string   `json:"restart"`
	Memory   int64    `json:"memory"`
	Priority int32    `json:"priority"`
}

// configOf is a record's config: the kind set, or, when none is, the kind
// of the image's OS with every key empty. It is never null.
func configOf(spec *edgev1alpha1.DeployRecordSpec) any {
	c := spec.Config
	if c == nil {
		c = &edgev1alpha1.ServiceConfig{}
	}
	switch {
	case c.Linux != nil:
		l := c.Linux
		return linuxConfig{Hostname: l.Hostname, Env: orEmpty(l.Env), Cmd: orEmpty(l.Cmd), Name: l.Name, Restart: string(l.Restart),
			Network: l.Network, Memory: l.Memory, HealthCmd: orEmpty(l.HealthCmd)}
	case c.Embedded != nil:
		e := c.Embedded
		out := embeddedConfig{Name: e.Name, Env: orEmpty(e.Env), Cmd: orEmpty(e.Cmd), Restart: string(e.Restart), Memory: e.Memory}
		if e.Priority != nil {
			out.Priority = *e.Priority
		}
		return out
	case imageOS(spec.Image.Ref) == linuxOS:
		return linuxConfig{Env: []string{}, Cmd: []string{}, HealthCmd: []string{}}
	default:
		return embeddedConfig{Env: []string{}, Cmd: []string{}}
	}
}

// linuxOS is the OS part of the refs of Linux images.
const linuxOS = "linux"

// imageOS is the OS part of an image ref name@tag#os.
func imageOS(ref edgev1alpha1.ImageRef) string {
	r, _ := imageref.Parse(string(ref)) // the schema validated it
	return r.OS
}

// getRecord serves GET /api/v1/service/record/{id}.
func (s *Server) getRecord(r *http.Request) (any, error) {
	id := r.PathValue("id")
	list := &edgev1alpha1.DeployRecordList{}
	if err := s.lookup(r.Context(), list, index.ByUID, id, true); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, notFound("No deployment record has the id %q.", id)
	}
	rec := &list.Items[0]
	spec := &rec.Spec
	d := recordDetail{
		ID: string(rec.UID), Action: string(spec.Action), Cmd: orEmpty(spec.Cmd), Name: spec.ServiceName,
		NodeList: recordNodes(rec), NodesOmitted: spec.NodesOmitted, CreatedTime: s.formatTime(rec.CreationTimestamp.Time), Policy: string(spec.Policy),
		Image: recordImage{
			ID: string(spec.Image.Ref), Ref: string(spec.Image.Ref), Path: spec.Image.Path,
			PullPolicy: string(spec.Image.EffectivePullPolicy()), AutoUpgrade: string(spec.Image.AutoUpgrade),
		},
	}
	if d.Action == "" {
		d.Action = string(edgev1alpha1.ActionRun)
	}
	if d.Image.AutoUpgrade == "" {
		d.Image.AutoUpgrade = string(edgev1alpha1.AutoUpgradeNever)
	}
	// factor is the instance count: spec.factor when dynamic, the number of
	// listed nodes when static.
	if spec.Factor != nil {
		d.Factor = *spec.Factor
	} else {
		d.Factor = int32(len(spec.Nodes)) + spec.NodesOmitted
	}
	d.Config = configOf(spec)
	if v := spec.VSOA; v != nil {
		d.VSOA = vsoa{Port: v.Port, HealthPath: v.HealthPath, HealthIntervalMs: v.HealthIntervalMs, HealthTimeoutMs: v.HealthTimeoutMs, HealthStartDelayMs: v.HealthStartDelayMs}
	}
	return d, nil
}

// listRecords serves GET /api/v1/service/record: a service's records,
// newest first.
func (s *Server) listRecords(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, aerr := parsePage(q)
	if aerr != nil {
		return nil, aerr
	}
	id := q.Get("id")
	if strings.TrimSpace(id) == "" {
		return nil, badField("id", "is required: the id of the service")
	}
	if len(s.serviceIndex.get(id)) == 0 {
		return nil, notFound("No service has the id %q.", id)
	}
	// Pointers into the cache, kept in order, not the records themselves.
	pg := paginate(s.recordsByService.get(id), p)
	out := pageOf[recordItem]{List: make([]recordItem, 0, len(pg.List)), Total: pg.Total, PageNum: pg.PageNum, PageSize: pg.PageSize}
	for _, rec := range pg.List {
		out.List = append(out.List, recordItem{
			ID: string(rec.UID), Name: rec.Spec.ServiceName, Image: string(rec.Spec.Image.Ref), Cmd: orEmpty(rec.Spec.Cmd),
			CreatedTime: s.formatTime(rec.CreationTimestamp.Time), NodeList: recordNodes(rec), NodesOmitted: rec.Spec.NodesOmitted,
		})
	}
	return out, nil
}

func recordNodes(rec *edgev1alpha1.DeployRecord) []recordNode {
	out := make([]recordNode, 0, len(rec.Spec.Nodes))
	for _, n := range rec.Spec.Nodes {
		out = append(out, recordNode{NodeID: n.NodeID, NodeName: n.NodeName, Address: n.Address})
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
