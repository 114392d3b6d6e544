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

package registryauth

import (
	"encoding/base64"
	"testing"
)

func TestFor(t *testing.T) {
	c, err := Parse([]byte(`{"auths":{
		"127.0.0.1:5000": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("robot:s3cret:with:colons")) + `"},
		"https://index.docker.io/v1/": {"username": "hub", "password": "hubpw"},
		"registry.plant-a.local": {"identitytoken": "tok"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		image, user, pass, token, domain string
		found                            bool
	}{
		{"127.0.0.1:5000/edgeplane/box:1", "robot", "s3cret:with:colons", "", "127.0.0.1:5000", true},
		{"busybox:1", "hub", "hubpw", "", "docker.io", true},
		{"docker.io/library/busybox:1", "hub", "hubpw", "", "docker.io", true},
		{"registry.plant-a.local/sensor/gw:1.4", "", "", "tok", "registry.plant-a.local", true},
		{"127.0.0.1:5001/box:1", "", "", "", "127.0.0.1:5001", false},
		{"edgeplane.local/box:1", "", "", "", "edgeplane.local", false},
	} {
		e, domain, found, err := For(c, tc.image)
		if err != nil {
			t.Fatalf("%s: %v", tc.image, err)
		}
		if found != tc.found || domain != tc.domain || e.Username != tc.user || e.Password != tc.pass || e.IdentityToken != tc.token {
			t.Errorf("%s: got %+v %s %v; want user %q pass %q token %q domain %s found %v", tc.image, e, domain, found, tc.user, tc.pass, tc.token, tc.domain, tc.found)
		}
	}
	if _, _, _, err := For(c, "box::1"); err == nil {
		t.Error("an invalid image name gave no error")
	}
}

// The first config that has a registry wins it, whatever the key's form.
func TestMerge(t *testing.T) {
	a, _ := Parse([]byte(`{"auths":{"docker.io":{"username":"a"},"r.local":{"username":"a"}}}`))
	b, _ := Parse([]byte(`{"auths":{"https://index.docker.io/v1/":{"username":"b"},"s.local":{"username":"b"}}}`))
	m := Merge(a, b)
	if len(m.Auths) != 3 {
		t.Fatalf("merged %v; want docker.io, r.local and s.local", m.Auths)
	}
	if e, _, _, _ := For(m, "busybox"); e.Username != "a" {
		t.Fatalf("docker.io from %q; want the first config's", e.Username)
	}
	if e, _, _, _ := For(m, "s.local/x"); e.Username != "b" {
		t.Fatalf("s.local from %q; want b", e.Username)
	}
	if _, err := Parse([]byte(`not json`)); err == nil {
		t.Fatal("Parse accepted something that is not JSON")
	}
}
