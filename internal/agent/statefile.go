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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// stateFile keeps a node's last desired state on the device: the services
// placed on it (their specs) and its instances, as the API server last
// said. The agent starts from it when the API server cannot be reached,
// as KubeEdge's edge keeps its metadata locally. It is written atomically
// (temporary file, fsync, rename, fsync of the directory) and checked on
// load: a file that is corrupt, of another format or of another node is
// set aside, never trusted.
type stateFile struct {
	path string
	node string
	// saved is the fingerprint of what the file holds, so that an
	// unchanged desired state is not written again.
	saved string
}

// stateKind and stateVersion name the file's format: version 2 keeps the
// node's assignment entries; version 1, written by v0.1.0's agent,
// kept EdgeServices with the node's instances in their status, and is
// still read.
const (
	stateKind    = "EdgeAgentState"
	stateVersion = 2
)

// stateDoc is the file's JSON. Checksum is the SHA-256 of Services as
// written, so that a torn or edited file is caught.
type stateDoc struct {
	Kind     string          `json:"kind"`
	Version  int             `json:"version"`
	Node     string          `json:"node"`
	Written  time.Time       `json:"written"`
	Checksum string          `json:"checksum"`
	Services json.RawMessage `json:"services"`
}

func newStateFile(dir, node string) *stateFile {
	return &stateFile{path: filepath.Join(dir, node+".json"), node: node}
}

// load reads the desired state: the services with only this node's
// instances. A missing file is no state; a bad one is renamed aside (the
// error says where) and yields no state.
func (f *stateFile) load(now time.Time) ([]assigned, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	services, why := f.parse(data)
	if why == "" {
		f.saved = fingerprint(services)
		return services, nil
	}
	aside := fmt.Sprintf("%s.bad-%d", f.path, now.Unix())
	if err := os.Rename(f.path, aside); err != nil {
		return nil, fmt.Errorf("state file %s %s, and setting it aside failed: %w", f.path, why, err)
	}
	return nil, fmt.Errorf("state file %s %s; set aside as %s, not trusted", f.path, why, aside)
}

// parse checks a file and returns its services, or why it is not trusted.
func (f *stateFile) parse(data []byte) ([]assigned, string) {
	var doc stateDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, "is not valid JSON (" + err.Error() + ")"
	}
	switch {
	case doc.Kind != stateKind || doc.Version < 1 || doc.Version > stateVersion:
		return nil, fmt.Sprintf("is not an edge agent state file of version 1 to %d (kind %q, version %d)", stateVersion, doc.Kind, doc.Version)
	case doc.Node != f.node:
		return nil, fmt.Sprintf("belongs to node %q, not %q", doc.Node, f.node)
	case doc.Checksum != checksum(doc.Services):
		return nil, "does not match its checksum (torn or edited)"
	}
	if doc.Version == 1 {
		var services []edgev1alpha1.EdgeService
		if err := json.Unmarshal(doc.Services, &services); err != nil {
			return nil, "holds services that do not decode (" + err.Error() + ")"
		}
		return fromVersion1(services), ""
	}
	var services []assigned
	if err := json.Unmarshal(doc.Services, &services); err != nil {
		return nil, "holds services that do not decode (" + err.Error() + ")"
	}
	return services, ""
}

// fromVersion1 reads the EdgeServices of a version 1 file as the entries
// they were made from: the resourceVersion was the entry's version, and
// the status the node's instances.
func fromVersion1(services []edgev1alpha1.EdgeService) []assigned {
	out := make([]assigned, 0, len(services))
	for _, s := range services {
		a := assigned{Namespace: s.Namespace, Name: s.Name, Version: s.ResourceVersion,
			AssignedService: edgev1alpha1.AssignedService{UID: string(s.UID), Spec: s.Spec.DeploySpec}}
		for _, inst := range s.Status.Containers {
			a.Instances = append(a.Instances, edgev1alpha1.AssignedInstance{TaskID: inst.TaskID, Name: inst.Name,
				Revision: inst.Revision, DeployNum: inst.DeployNum, TaskCreatedTime: inst.TaskCreatedTime})
			a.Revision = max(a.Revision, inst.Revision)
		}
		out = append(out, a)
	}
	return out
}

// save writes the desired state when it differs from what the file holds.
func (f *stateFile) save(desired map[string]want, now time.Time) error {
	services := stateOf(desired)
	fp := fingerprint(services)
	if fp == f.saved {
		return nil
	}
	raw, err := json.Marshal(services)
	if err != nil {
		return err
	}
	data, err := json.Marshal(stateDoc{Kind: stateKind, Version: stateVersion, Node: f.node, Written: now.UTC(), Checksum: checksum(raw), Services: raw})
	if err != nil {
		return err
	}
	if err := writeAtomic(f.path, data); err != nil {
		return err
	}
	f.saved = fp
	return nil
}

// stateOf is what the file keeps of the desired instances: each service's
// entry with the node's instances of it, in a stable order.
func stateOf(desired map[string]want) []assigned {
	byService := map[string]*assigned{}
	for _, w := range desired {
		key := w.svc.Namespace + "/" + w.svc.Name
		s := byService[key]
		if s == nil {
			s = &assigned{Namespace: w.svc.Namespace, Name: w.svc.Name, Version: w.svc.Version, AssignedService: edgev1alpha1.AssignedService{
				UID: w.svc.UID, Revision: w.svc.Revision, Spec: *w.svc.Spec.DeepCopy(),
			}}
			byService[key] = s
		}
		s.Instances = append(s.Instances, *w.inst.DeepCopy())
	}
	out := make([]assigned, 0, len(byService))
	for _, s := range byService {
		sort.Slice(s.Instances, func(i, j int) bool { return s.Instances[i].TaskID < s.Instances[j].TaskID })
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// fingerprint names a desired state by its services' versions and the
// node's instances at their revisions.
func fingerprint(services []assigned) string {
	var b strings.Builder
	for _, s := range services {
		fmt.Fprintf(&b, "%s/%s@%s:", s.Namespace, s.Name, s.Version)
		for _, inst := range s.Instances {
			fmt.Fprintf(&b, "%s=%d,", inst.TaskID, inst.Revision)
		}
		b.WriteByte(';')
	}
	return b.String()
}

func checksum(b []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(b))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// wantsOf turns the file's services back into the node's desired instances.
func wantsOf(services []assigned) map[string]want {
	out := map[string]want{}
	for i := range services {
		for _, inst := range services[i].Instances {
			out[inst.TaskID] = want{svc: &services[i], inst: inst}
		}
	}
	return out
}

// writeAtomic replaces path with data so that a crash at any moment leaves
// either the old file or the new one, whole: a temporary file in the same
// directory, fsynced, renamed over path, and the directory fsynced so the
// rename itself survives a power cut. Only the owner may read it: service
// specs can carry environment values.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}
