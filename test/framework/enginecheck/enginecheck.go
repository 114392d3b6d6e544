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

// Package enginecheck compares what a real container engine holds for
// one node with what the node is assigned: exactly one container per
// instance, at the instance's revision, running, with the service's
// current configuration; nothing else of the node's. The edge chaos run
// and the soak run judge their real node with it.
package enginecheck

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"

	mobyclient "github.com/moby/moby/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
)

// Want is what the container of one instance must be.
type Want struct {
	// Service names the instance's service, for the notes.
	Service string
	// Revision is the instance's revision, as its container's label
	// must say.
	Revision int64
	// Env is an entry the container's environment must hold: the mark of
	// the service's current configuration, such as CHANGE=12.
	Env string
}

// Wanted are the instances the node is assigned of the given services,
// by task ID; env says the environment entry of a service's current
// configuration.
func Wanted(placed *edgev1alpha1.NodeAssignment, services []edgev1alpha1.EdgeService, env func(*edgev1alpha1.EdgeService) string) map[string]Want {
	out := map[string]Want{}
	for i := range services {
		s := &services[i]
		for _, inst := range placed.Spec.Services[edgev1alpha1.AssignmentKey(s.Namespace, s.Name)].Instances {
			out[inst.TaskID] = Want{Service: s.Name, Revision: inst.Revision, Env: env(s)}
		}
	}
	return out
}

// Container is one of the node's containers as the engine lists it.
type Container struct {
	ID    string
	Names []string
	// Task and Revision are its labels (agent.LabelTaskID,
	// agent.LabelRevision).
	Task, Revision string
}

// Inspected is what the engine says of a container once inspected.
type Inspected struct {
	Running bool
	Env     []string
}

// Report is what the check found; Notes say which, one line each.
type Report struct {
	// Orphans are containers of no wanted instance, or of another
	// revision than the instance's; Duplicates are containers beyond the
	// first of an instance; Lost are containers not running or without
	// the current configuration, and instances without a container.
	Orphans, Duplicates, Lost int
	Notes                     []string
}

// Mismatches counts every finding.
func (r Report) Mismatches() int { return r.Orphans + r.Duplicates + r.Lost }

// Judge compares the node's containers with the wanted instances.
// inspect is asked only of the first container of each wanted instance
// at its revision.
func Judge(want map[string]Want, list []Container, inspect func(id string) (Inspected, error)) (Report, error) {
	var rep Report
	seen := map[string]int{}
	for _, c := range list {
		w, ok := want[c.Task]
		if !ok || c.Revision != strconv.FormatInt(w.Revision, 10) {
			rep.Orphans++
			rep.Notes = append(rep.Notes, fmt.Sprintf("orphan: container %s %v of no current instance", short(c.ID), c.Names))
			continue
		}
		if seen[c.Task]++; seen[c.Task] > 1 {
			rep.Duplicates++
			rep.Notes = append(rep.Notes, fmt.Sprintf("duplicate: container %s %v of instance %s", short(c.ID), c.Names, c.Task))
			continue
		}
		got, err := inspect(c.ID)
		if err != nil {
			return rep, err
		}
		if !got.Running || !slices.Contains(got.Env, w.Env) {
			rep.Lost++
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: the engine runs %v (running %v), not %s", w.Service, got.Env, got.Running, w.Env))
		}
	}
	tasks := make([]string, 0, len(want))
	for task := range want {
		tasks = append(tasks, task)
	}
	sort.Strings(tasks)
	for _, task := range tasks {
		if seen[task] == 0 {
			rep.Lost++
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: instance %s has no container", want[task].Service, task))
		}
	}
	return rep, nil
}

// short is a container ID as the engine's CLI prints it.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Check lists the engine's containers of node, stopped ones too, and
// judges them against want.
func Check(ctx context.Context, eng *mobyclient.Client, node string, want map[string]Want) (Report, error) {
	list, err := eng.ContainerList(ctx, mobyclient.ContainerListOptions{All: true,
		Filters: make(mobyclient.Filters).Add("label", agent.LabelNode+"="+node)})
	if err != nil {
		return Report{}, err
	}
	cs := make([]Container, 0, len(list.Items))
	for _, c := range list.Items {
		cs = append(cs, Container{ID: c.ID, Names: c.Names, Task: c.Labels[agent.LabelTaskID], Revision: c.Labels[agent.LabelRevision]})
	}
	return Judge(want, cs, func(id string) (Inspected, error) {
		got, err := eng.ContainerInspect(ctx, id, mobyclient.ContainerInspectOptions{})
		if err != nil {
			return Inspected{}, err
		}
		return Inspected{Running: got.Container.State.Running, Env: got.Container.Config.Env}, nil
	})
}

// Count is how many containers the engine holds, whatever their node,
// label or state.
func Count(ctx context.Context, eng *mobyclient.Client) (int, error) {
	list, err := eng.ContainerList(ctx, mobyclient.ContainerListOptions{All: true})
	if err != nil {
		return 0, err
	}
	return len(list.Items), nil
}
