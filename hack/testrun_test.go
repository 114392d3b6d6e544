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

package hack

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestRunFindsAFileLeftBehind runs make test's runner, hack/test.sh, over
// one package whose test leaves a file in its temporary directory, and
// over the same package when it leaves none: the first run fails and
// names the file, the second passes; neither leaves anything.
func TestRunFindsAFileLeftBehind(t *testing.T) {
	for _, c := range []struct {
		leave string // EDGEPLANE_LEAVE_FILE
		want  string
	}{
		{"1", "files left behind in the run's temporary directory (removed now):\n  edgeplane-leaver."},
		{"0", "files left behind: none"},
	} {
		tmp := t.TempDir()
		cmd := exec.Command("bash", "hack/test.sh")
		cmd.Dir = testenv.RepoRoot()
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "TEST_PACKAGES=./hack/testdata/leaver", "SLOW_SUITES=", "SKIP_FUZZ=1",
			"TEST_PARALLEL=1", "EDGEPLANE_LEAVE_FILE="+c.leave)
		out, err := cmd.CombinedOutput()
		if fails := c.leave == "1"; fails != (err != nil) {
			t.Errorf("leave=%v: hack/test.sh: %v, want failure %v\n%s", c.leave, err, fails, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("leave=%v: hack/test.sh printed\n%s\nwant %q in it", c.leave, out, c.want)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("leave=%v: the run left %d entries in TMPDIR, e.g. %s", c.leave, len(left), left[0].Name())
		}
	}
}
