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

import "os"

// The same audit log as test/perf/scale's, so that kube-apiserver does the same
// work per write on both sides: one line per request that writes.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// writeAuditPolicy writes the policy into dir and returns the API server
// flags that turn the audit log on, as test/perf/scale/audit.go does.
func writeAuditPolicy(dir string) (map[string]string, error) {
	policy := dir + "/audit-policy.yaml"
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return map[string]string{
		"audit-policy-file": policy, "audit-log-path": dir + "/audit.log", "audit-log-format": "json",
		"audit-log-mode": "batch", "audit-log-batch-max-wait": "1s",
		// kube-apiserver rotates its log at 100 MB unless told otherwise.
		"audit-log-maxsize": "100000",
	}, nil
}
