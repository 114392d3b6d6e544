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
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// desiredState is where the node learns what it should run: the watch
// cache of its services once it has synced, its state file until then.
// Only the dispatch loop uses it.
type desiredState struct {
	node       string
	assignment client.Reader
	synced     func() bool
	log        func(msg string, kv ...any)
	// namespace, when set, limits the services to one namespace.
	namespace string
	// state is the node's state file (nil without a state directory);
	// last is the last authoritative desired state, or what the file
	// held at start.
	state *stateFile
	last  map[string]want
	// read is what the assignment of resourceVersion readRV holds.
	read   map[string]want
	readRV string
	disk   outage
}

func newDesiredState(node string, assignment client.Reader, synced func() bool, stateDir string, log func(string, ...any)) *desiredState {
	d := &desiredState{node: node, assignment: assignment, synced: synced, log: log, disk: outage{what: "State file writes", log: log}}
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
	d.last = wantsOf(services)
	if len(services) > 0 {
		d.log("Loaded the node's last desired state", "file", d.state.path, "instances", len(d.last))
	}
}

// get returns the node's desired instances and whether they are
// authoritative: read from the node's assignment once the cache has
// synced and the assignment exists. Until then, and while it is missing
// (the manager makes it with the node's first instance; someone may
// delete it by hand), the last desired state stands, and nothing is
// removed for being absent from it.
func (d *desiredState) get(ctx context.Context) (map[string]want, bool, error) {
	if !d.synced() {
		return d.last, false, nil
	}
	a := &edgev1alpha1.NodeAssignment{}
	if err := d.assignment.Get(ctx, types.NamespacedName{Name: d.node}, a, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return d.last, false, nil
		}
		return nil, false, err
	}
	// Read at every tick: the wants are built again only when the
	// assignment changed.
	if a.ResourceVersion != d.readRV {
		d.read, d.readRV = wantsOfAssignment(a, d.namespace), a.ResourceVersion
	}
	return d.read, true, nil
}

// wantsOfAssignment turns a node's assignment into its desired instances:
// each entry's, with the service it names and its version.
func wantsOfAssignment(a *edgev1alpha1.NodeAssignment, namespace string) map[string]want {
	out := map[string]want{}
	for key, e := range a.Spec.Services {
		ns, name, _ := strings.Cut(key, "/")
		if e.Deleting || (namespace != "" && ns != namespace) {
			continue
		}
		svc := &assigned{Namespace: ns, Name: name, Version: entryVersion(&e), AssignedService: e}
		for _, inst := range e.Instances {
			out[inst.TaskID] = want{svc: svc, inst: inst}
		}
	}
	return out
}

// entryVersion is a digest of an entry's revision and configuration.
func entryVersion(e *edgev1alpha1.AssignedService) string {
	raw, _ := json.Marshal(e.Spec)
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s/%d/", e.UID, e.Revision)
	_, _ = h.Write(raw)
	return strconv.FormatUint(h.Sum64(), 36)
}

// remember keeps the desired state the API server gave in the state file.
func (d *desiredState) remember(desired map[string]want, now time.Time) {
	d.last = desired
	if d.state == nil {
		return
	}
	if err := d.state.save(desired, now); err != nil {
		d.disk.fail(now, err)
	} else {
		d.disk.ok(now)
	}
}
