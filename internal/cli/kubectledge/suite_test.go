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

package kubectledge_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/cli/kubectledge"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

var update = flag.Bool("update", false, "Write the golden files from what the commands print.")

var (
	ctx        context.Context
	testEnv    *envtest.Environment
	k8sClient  client.Client
	kubeconfig string
)

func TestKubectlEdge(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	testenv.RunSpecs(t, "kubectl edge suite")
}

var _ = BeforeSuite(func() {
	var cfg *rest.Config
	ctx, testEnv, cfg, k8sClient = testenv.StartSuite()
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(testenv.WriteKubeconfig(testEnv, kubeconfig)).To(Succeed())
	// The manager records each change, a rollback's too.
	mo := manager.ForTest(controllers.DefaultOptions())
	mo.API.BindAddress = "0"
	testenv.RunManager(ctx, cfg, mo)
})

// kubectlEdge runs the plugin's command with args against the test's
// cluster, as kubectl would run it, and returns what it printed and its
// error.
func kubectlEdge(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := kubectledge.NewCommand(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// times are what a golden file cannot hold: when the API server created
// an object.
var times = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// matchGolden compares out, its times masked, with testdata/name.
func matchGolden(out, name string) {
	GinkgoHelper()
	// Of the width of a time, so that the columns stay aligned.
	out = times.ReplaceAllString(out, "YYYY-MM-DDTHH:MM:SSZ")
	out = strings.ReplaceAll(out, os.Getenv("HOME"), "$HOME")
	file := filepath.Join("testdata", name)
	if *update {
		Expect(os.MkdirAll("testdata", 0o755)).To(Succeed())
		Expect(os.WriteFile(file, []byte(out), 0o644)).To(Succeed())
	}
	want, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred(), "run the tests with -update to write %s", file)
	Expect(out).To(Equal(string(want)), "%s (-update writes it)", file)
}
