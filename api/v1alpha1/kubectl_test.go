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

package v1alpha1_test

import (
	"bytes"
	"io"
)

// kubectl runs the kubectl of the envtest binaries against the test API server.
func kubectl(args ...string) (string, error) {
	cmd := testEnv.ControlPlane.KubeCtl()
	stdout, stderr, err := cmd.Run(args...)
	var out bytes.Buffer
	_, _ = io.Copy(&out, stdout)
	_, _ = io.Copy(&out, stderr)
	return out.String(), err
}
