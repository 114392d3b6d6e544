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

package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDeployRecord(t *testing.T) {
	if got := DeployRecord("web", 3); got != "web-3" {
		t.Errorf("DeployRecord = %q", got)
	}
	long := strings.Repeat("a", 253)
	a, b := DeployRecord(long, 12), DeployRecord(long[:252]+"b", 12)
	if a == b || len(a) > 253 || !strings.HasSuffix(a, "-12") {
		t.Errorf("long names: %q %q", a, b)
	}
	if errs := validation.IsDNS1123Subdomain(a); len(errs) > 0 {
		t.Errorf("%q: %v", a, errs)
	}
}

func TestPlacementLabel(t *testing.T) {
	if got := PlacementLabel("edge-1"); got != "node.edge.edgeplane.io/edge-1" {
		t.Errorf("PlacementLabel = %q", got)
	}
	for _, n := range []string{"edge.plant.local", strings.Repeat("n", 100)} {
		l := PlacementLabel(n)
		if errs := validation.IsQualifiedName(l); len(errs) > 0 {
			t.Errorf("%q -> %q: %v", n, l, errs)
		}
	}
	if PlacementLabel("a.b") == PlacementLabel("a.c") {
		t.Error("hashed labels collide")
	}
}

func TestTemplate(t *testing.T) {
	a := Template("/plant", "Sensor Gateway")
	if !strings.HasPrefix(a, "sensor-gateway-") {
		t.Errorf("Template = %q", a)
	}
	if a == Template("/plant/x", "Sensor Gateway") || a != Template("/plant", "Sensor Gateway") {
		t.Error("Template must be a function of (parent, name) only")
	}
	for _, n := range []string{"漢字", "---", strings.Repeat("x", 300)} {
		if errs := validation.IsDNS1123Subdomain(Template("/", n)); len(errs) > 0 {
			t.Errorf("%q: %v", n, errs)
		}
	}
}
