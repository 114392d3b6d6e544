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

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The API server's own audit log counts the writes: one line per request
// that writes, with its resource, verb and field manager.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// writeAuditPolicy writes the policy into dir and returns the API server
// flags that turn the audit log on.
func writeAuditPolicy(dir string) (map[string]string, string, error) {
	policy := dir + "/audit-policy.yaml"
	log := dir + "/audit.log"
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, "", err
	}
	return map[string]string{
		"audit-policy-file": policy, "audit-log-path": log, "audit-log-format": "json",
		"audit-log-mode": "batch", "audit-log-batch-max-wait": "1s",
		// kube-apiserver rotates its log at 100 MB unless told otherwise,
		// and a long run writes more: 100 GB keeps it in one file (and
		// auditWrites reads rotated files too).
		"audit-log-maxsize": "100000",
	}, log, nil
}

type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Received time.Time `json:"requestReceivedTimestamp"`
}

// writeKey is what a write is counted by.
type writeKey struct{ resource, verb, manager string }

// auditWrites counts the writes the API server received in [from, to), by
// resource, verb and field manager (the fieldManager parameter, else the
// user agent's program name, which is the default manager).
func auditWrites(path string, from, to time.Time) (map[writeKey]int, error) {
	// Rotated files (audit-<time>.log) beside it are read too.
	files, err := filepath.Glob(strings.TrimSuffix(path, ".log") + "*.log")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no audit log at %s", path)
	}
	out := map[writeKey]int{}
	for _, name := range files {
		if err := countWrites(name, from, to, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countWrites adds the writes of one audit log file in [from, to) to out.
func countWrites(path string, from, to time.Time, out map[writeKey]int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.ObjectRef == nil {
			continue
		}
		if e.Received.Before(from) || !e.Received.Before(to) {
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		manager := ""
		if u, err := url.Parse(e.RequestURI); err == nil {
			manager = u.Query().Get("fieldManager")
		}
		if manager == "" {
			manager, _, _ = strings.Cut(e.UserAgent, "/")
		}
		verb := e.Verb
		if verb == "patch" && strings.Contains(e.RequestURI, "fieldManager=") && strings.Contains(e.RequestURI, "force=") {
			verb = "apply"
		}
		if e.ResponseStatus != nil && e.ResponseStatus.Code >= 400 {
			// Refused, timed out or given up: counted apart from
			// what was written.
			verb += "→" + strconv.Itoa(e.ResponseStatus.Code)
		}
		out[writeKey{res, verb, manager}]++
	}
	return sc.Err()
}

// breakdown formats the counts, most first, with per-instance figures.
func breakdown(counts map[writeKey]int, per string, n int) (string, int) {
	keys := make([]writeKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	var b strings.Builder
	notLease := 0
	fmt.Fprintf(&b, "  %-28s %-8s %-24s %8s %10s\n", "resource", "verb", "field manager", "writes", per)
	for _, k := range keys {
		c := counts[k]
		if k.resource != "leases" {
			notLease += c
		}
		fmt.Fprintf(&b, "  %-28s %-8s %-24s %8d %10.2f\n", k.resource, k.verb, k.manager, c, float64(c)/float64(n))
	}
	return b.String(), notLease
}
