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
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
)

// desiredState is where the node learns what it should run: the watch
// cache of its services once it has synced, its state file until then.
// Only the dispatch loop uses it.
type desiredState struct {
	node   string
	view   client.Reader
	synced func() bool
	log    func(msg string, kv ...any)
	// state is the node's state file (nil without a state directory);
	// fromFile is what it held at start.
	state    *stateFile
	fromFile map[string]want
	disk     outage
}

func newDesiredState(node string, view client.Reader, synced func() bool, stateDir string, log func(string, ...any)) *desiredState {
	d := &desiredState{node: node, view: view, synced: synced, log: log, disk: outage{what: "State file writes", log: log}}
	if stateDir != "" {
		d.state = newStateFile(stateDir, node)
	}
	return d
}

// load reads the state file: the desired state until the cache syncs.
func (d *desiredState) load(now time.Time) {
	if d.state == nil {
		return
	}
	services, err := d.state.load(now)
	if err != nil {
		d.log("Starting without the state file", "error", err.Error())
	}
	d.fromFile = wantsOf(services)
	if len(services) > 0 {
		d.log("Loaded the node's last desired state", "file", d.state.path, "instances", len(d.fromFile))
	}
}

// get lists the instances placed on the node, by task id, and says
// whether the API server said so: until the watch cache has synced they
// come from the state file, which may be out of date. Instances of a
// service being deleted are not wanted: their containers go, so that the
// service's finalizer can.
func (d *desiredState) get(ctx context.Context) (map[string]want, bool, error) {
	if !d.synced() {
		return d.fromFile, false, nil
	}
	list := &edgev1alpha1.EdgeServiceList{}
	if err := d.view.List(ctx, list, client.MatchingFields{index.ServiceByNode: d.node}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, err
	}
	out := map[string]want{}
	for i := range list.Items {
		svc := &list.Items[i]
		if svc.DeletionTimestamp != nil {
			continue
		}
		for _, inst := range svc.Status.Containers {
			if inst.NodeName == d.node {
				out[inst.TaskID] = want{svc: svc, inst: inst}
			}
		}
	}
	return out, true, nil
}

// remember keeps the desired state the API server gave in the state file.
func (d *desiredState) remember(desired map[string]want, now time.Time) {
	d.fromFile = nil
	if d.state == nil {
		return
	}
	if err := d.state.save(desired, now); err != nil {
		d.disk.fail(now, err)
	} else {
		d.disk.ok(now)
	}
}
