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

package tour

import (
	"reflect"
	"testing"
)

func TestRunnableBlocks(t *testing.T) {
	md := "# t\n\n```sh\nnot run\n```\n\n```sh runnable\nkubectl get edge -A\ncurl -fsS 'http://127.0.0.1:8090/api/v1/node'\n```\n\ntext\n\n  ```sh runnable\n  echo indented\n  ```\n"
	want := []string{"kubectl get edge -A\ncurl -fsS 'http://127.0.0.1:8090/api/v1/node'\n", "  echo indented\n"}
	if got := RunnableBlocks(md); !reflect.DeepEqual(got, want) {
		t.Errorf("RunnableBlocks = %q, want %q", got, want)
	}
	got := ForDev("export KUBECONFIG=/tmp/edgeplane-dev.3S8hg9/kubeconfig\ncurl 'http://127.0.0.1:8090/x' http://127.0.0.1:80901/y\n", "/tmp/edgeplane-dev.Ab12/kubeconfig", 41234)
	if want := "export KUBECONFIG=/tmp/edgeplane-dev.Ab12/kubeconfig\ncurl 'http://127.0.0.1:41234/x' http://127.0.0.1:80901/y\n"; got != want {
		t.Errorf("ForDev = %q, want %q", got, want)
	}
}
