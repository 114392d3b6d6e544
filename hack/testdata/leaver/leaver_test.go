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

// Package leaver is a test package for hack/test.sh's own test
// (TestRunFindsAFileLeftBehind): with EDGEPLANE_LEAVE_FILE=1 its test
// leaves a file in the temporary directory, as a careless test would.
// Under testdata, ./hack/... never runs it.
package leaver

import (
	"os"
	"testing"
)

func TestLeave(t *testing.T) {
	if os.Getenv("EDGEPLANE_LEAVE_FILE") != "1" {
		return
	}
	f, err := os.CreateTemp("", "edgeplane-leaver.")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
