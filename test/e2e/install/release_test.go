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

package install

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/edgeplane/edgeplane/test/framework/testenv"
)

// binaries are the programs the release is made of, built once.
type binaries struct {
	manager, agent, plugin, helm string
}

// build builds the manager, the agent and the kubectl plugin for this
// machine, stamped with version, and finds the helm CLI (hack/tool.sh,
// from the Go module proxy).
func build(t *testing.T, root, dir, version string) binaries {
	t.Helper()
	ldflags := "-X github.com/edgeplane/edgeplane/internal/version.version=" + version
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", dir+"/", "./cmd/manager", "./cmd/edge-agent", "./cmd/kubectl-edge")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the binaries: %v\n%s", err, out)
	}
	helm, err := exec.Command("bash", filepath.Join(root, "hack", "tool.sh"), "helm").Output()
	if err != nil {
		t.Fatalf("hack/tool.sh helm: %v", err)
	}
	return binaries{manager: filepath.Join(dir, "manager"), agent: filepath.Join(dir, "edge-agent"), plugin: filepath.Join(dir, "kubectl-edge"), helm: strings.TrimSpace(string(helm))}
}

// release lays out dist/release/VERSION under dir as make release
// (hack/release.sh) does, for this machine's platform: the manager's
// image as a per-platform archive and as an OCI archive, named
// registry/manager:VERSION; the agent and the plugin per platform; the
// bundle; the chart packaged with --version and --app-version; the
// release notes; SHA256SUMS over them all. SBOMs are left out.
func release(t *testing.T, root, dir string, bins binaries, version, registry string) string {
	t.Helper()
	out := filepath.Join(dir, "dist", "release", version)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	platform, suffix := "linux/"+goruntime.GOARCH, "linux-"+goruntime.GOARCH
	img := registry + "/manager:" + version
	images := filepath.Join(dir, "images-"+version)
	run(t, root, "go", "run", "./hack/image", "--name", img, "--entrypoint", "/manager", "--version", version, "--out", images, "--binary", platform+"="+bins.manager)
	if err := os.Rename(filepath.Join(images, "manager-"+suffix+".tar"), filepath.Join(out, "manager-"+suffix+".tar")); err != nil {
		t.Fatal(err)
	}
	run(t, root, "tar", "-C", filepath.Join(images, "manager.oci"), "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-cf", filepath.Join(out, "manager-oci.tar"), ".")
	copyFile(t, bins.agent, filepath.Join(out, "edge-agent-"+suffix), 0o755)
	copyFile(t, bins.plugin, filepath.Join(out, "kubectl-edge-"+suffix), 0o755)
	run(t, root, "bash", "hack/build-installer.sh", img, filepath.Join(out, "install.yaml"))
	run(t, root, bins.helm, "package", "charts/edgeplane", "--version", strings.TrimPrefix(version, "v"), "--app-version", version, "--destination", out)
	if err := os.WriteFile(filepath.Join(out, "CHANGELOG.md"), []byte("# edgeplane "+version+"\n\nA release the install suite cut.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var sums strings.Builder
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(out, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), e.Name())
		}
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// run runs a command in dir and fails the test with its output if it fails.
func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

// imageRegistry is a registry on loopback over TLS (go-containerregistry's,
// in memory), as the cluster's private registry: the reader's skopeo
// trusts its CA from /etc/containers/certs.d, the kubelet (played by the
// test) pulls from it.
type imageRegistry struct {
	host   string
	caPEM  []byte
	client *http.Client
}

func startRegistry(t *testing.T) *imageRegistry {
	t.Helper()
	ca, err := testenv.NewCA("install-suite-registry-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(testenv.Leaf{CommonName: "registry"})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(nopLogger())), TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return &imageRegistry{
		host:   l.Addr().String(),
		caPEM:  ca.PEM,
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}},
	}
}

// pullable says whether image is in the registry, for every platform the
// kubelet might pull.
func (r *imageRegistry) pullable(ctx context.Context, image string) error {
	ref, err := name.ParseReference(image)
	if err != nil {
		return err
	}
	if ref.Context().RegistryStr() != r.host {
		return fmt.Errorf("the image is not in the cluster's registry %s", r.host)
	}
	desc, err := remote.Get(ref, remote.WithContext(ctx), remote.WithTransport(r.client.Transport))
	if err != nil {
		return err
	}
	if !desc.MediaType.IsIndex() {
		return nil
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(m.Manifests, func(d v1.Descriptor) bool { return d.Platform != nil && d.Platform.Architecture == goruntime.GOARCH }) {
		return fmt.Errorf("the image has no %s manifest", goruntime.GOARCH)
	}
	return nil
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
