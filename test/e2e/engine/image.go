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

package engine

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/image"
)

// ImageSpecs check the manager image on Podman: the body of an Ordered
// container of the Podman suite.
func ImageSpecs() {
	var n *node
	BeforeAll(func() {
		var err error
		n = &node{kind: "podman"}
		n.engine, err = testenv.StartEngine(n.kind)
		Expect(err).NotTo(HaveOccurred(), "this suite needs a real container engine; set %s=1 to skip it", testenv.SkipEngineVar)
		n.eng, err = client.New(client.WithHost(n.engine.Host))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(n.stop)
	})

	It("runs as a non-root user from one layer, and its facade answers 200 against a control plane", func() {
		dir := GinkgoT().TempDir()
		By("building it as make image does: a static binary, no base image")
		bin := filepath.Join(dir, "manager")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/manager")
		build.Dir, build.Env = testenv.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goruntime.GOARCH)
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		platform := "linux/" + goruntime.GOARCH
		archives, err := image.Build(image.Spec{Name: "edgeplane/manager:test", Entrypoint: "/manager", Version: "test", Binaries: map[string]string{platform: bin}}, dir)
		Expect(err).NotTo(HaveOccurred())

		By("loading it into the engine")
		f, err := os.Open(archives[platform])
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = f.Close() }()
		res, err := n.eng.ImageLoad(ctx, f)
		Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, res)
		_ = res.Close()
		img, err := n.eng.ImageInspect(ctx, "edgeplane/manager:test")
		Expect(err).NotTo(HaveOccurred())
		Expect(img.Config.User).To(Equal(image.NonRoot))
		Expect(img.RootFS.Layers).To(HaveLen(1))

		By("running it, as a read replica of the facade, against the suite's control plane")
		config := filepath.Join(dir, "config")
		Expect(os.Mkdir(config, 0o755)).To(Succeed())
		kubeconfig := filepath.Join(config, "kubeconfig")
		Expect(testenv.WriteKubeconfig(sys.Env, kubeconfig)).To(Succeed())
		Expect(os.Chmod(kubeconfig, 0o644)).To(Succeed(), "readable by the image's non-root user")
		port := freePort()
		created, err := n.eng.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name: "edgeplane-manager-image",
			Config: &container.Config{Image: "edgeplane/manager:test", Cmd: []string{
				"--kubeconfig=/config/kubeconfig", "--controllers=false", "--api-bind-address=127.0.0.1:" + port,
				"--metrics-bind-address=0", "--health-probe-bind-address=0",
			}},
			HostConfig: &container.HostConfig{NetworkMode: "host", Binds: []string{config + ":/config:ro"}},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, _ = n.eng.ContainerRemove(ctx, created.ID, client.ContainerRemoveOptions{Force: true})
		})
		_, err = n.eng.ContainerStart(ctx, created.ID, client.ContainerStartOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			resp, err := http.Get("http://127.0.0.1:" + port + "/api/v1/node?pageSize=-1")
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "%s", body)
			g.Expect(string(body)).To(ContainSubstring(`"status":200`))
		}).Should(Succeed(), func() string { return containerLog(n.eng, created.ID) })
		got := inspect(n.eng, created.ID)
		Expect(got.Config.User).To(Equal(image.NonRoot), "it runs as the non-root user")
	})
}

// freePort is a loopback port nobody listens on.
func freePort() string {
	GinkgoHelper()
	addr, err := testenv.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// containerLog is what a container printed, for a failure's message.
func containerLog(eng *client.Client, id string) string {
	r, err := eng.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return err.Error()
	}
	defer func() { _ = r.Close() }()
	b, _ := io.ReadAll(r)
	return strings.ToValidUTF8(string(b), "?")
}
