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

package nodejoin

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

// The checks the plugin and the facade share; the writes are tested
// against envtest by both (internal/cli/kubectledge, apiserver).
func TestChecks(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string // "" for none
	}{
		{CheckName("edge-01"), ""},
		{CheckName("Bad_Name"), `"Bad_Name" cannot name an edge node: a lowercase RFC 1123 subdomain`},
		{CheckName(strings.Repeat("a", 64)), `cannot name an edge node that joins with a token`},
		{CheckTTL(time.Hour), ""},
		{CheckTTL(0), "a join token lasts more than 0 and at most 168h0m0s"},
		{CheckTTL(MaxTTL + time.Second), "a join token lasts more than 0 and at most 168h0m0s"},
		{CheckHub("https://hub:8443"), ""},
		{CheckHub("http://hub:80"), "give the hub's URL as devices reach it, https://HOST:PORT"},
		{CheckLabel("site", "plant-a"), ""},
		{CheckLabel("bad/key/x", "1"), `"bad/key/x" is not a label key`},
		{CheckLabel("site", "a_"), `"a_" is not a value of label site`},
	} {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("unexpected %v", c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
	j := &Join{Token: hubapi.Token{ID: "abcdef", Secret: "0123456789abcdef"}, Server: "https://hub:8443", CAHash: "sha256:00"}
	if got := j.Command(); got != "edge-agent join --hub https://hub:8443 --token abcdef.0123456789abcdef --ca-cert-hash sha256:00" {
		t.Errorf("command %q", got)
	}
}
