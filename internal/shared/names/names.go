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

// Package names derives the deterministic names and labels edgeplane gives
// to the objects it creates, so that retries, stale caches and racing
// writers meet on one name instead of creating two objects.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
)

// shorten keeps s when it fits in max characters; otherwise it cuts s and
// appends a hash of the whole, so that distinct long inputs stay distinct.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:10]
	cut := s[:max-len(h)-1]
	for len(cut) > 0 && (cut[len(cut)-1] == '-' || cut[len(cut)-1] == '.') {
		cut = cut[:len(cut)-1]
	}
	return cut + "-" + h
}

// DeployRecord is the name of revision rev of a service: <service>-<rev>.
func DeployRecord(service string, rev int64) string {
	suffix := "-" + strconv.FormatInt(rev, 10)
	return shorten(service, validation.DNS1123SubdomainMaxLength-len(suffix)) + suffix
}

// PlacementLabelPrefix starts the label keys that mark the nodes a service
// has instances on.
const PlacementLabelPrefix = "node.edge.edgeplane.io/"

// PlacementLabel is the label key an EdgeService carries while it has an
// instance on the node, so that an agent can watch only the services of its
// node with the selector PlacementLabel(node). Node names that are not valid
// label names (longer than 63 characters, or with dots) are hashed.
func PlacementLabel(node string) string {
	if len(validation.IsDNS1123Label(node)) == 0 {
		return PlacementLabelPrefix + node
	}
	sum := sha256.Sum256([]byte(node))
	return PlacementLabelPrefix + "h-" + hex.EncodeToString(sum[:])[:32]
}

// Container is the container name of an instance: the configured container
// name, or the service name, followed by the start of the task id. The
// suffix keeps names unique when a node runs several instances.
func Container(base, taskID string) string {
	id := taskID
	if len(id) > 8 {
		id = id[:8]
	}
	return shorten(base, 253-len(id)-1) + "-" + id
}

// Template is the object name of the ProvisionTemplate called name in the
// folder parent: readable where it can be, unique for each (parent, name).
func Template(parent, name string) string {
	sum := sha256.Sum256([]byte(parent + "\x00" + name))
	h := hex.EncodeToString(sum[:])[:12]
	slug := make([]byte, 0, len(name))
	for i := 0; i < len(name) && len(slug) < 40; i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			slug = append(slug, c)
		case c >= 'A' && c <= 'Z':
			slug = append(slug, c+'a'-'A')
		case len(slug) > 0 && slug[len(slug)-1] != '-':
			slug = append(slug, '-')
		}
	}
	for len(slug) > 0 && slug[len(slug)-1] == '-' {
		slug = slug[:len(slug)-1]
	}
	if len(slug) == 0 {
		return "pt-" + h
	}
	return string(slug) + "-" + h
}
