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
	"crypto/tls"
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

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// binaries are the manager the kubelet (played by the test) runs for
// the Deployments' pods, and the helm CLI.
type binaries struct {
	manager, helm string
}

// build builds the manager for this machine, stamped with version, and
// finds the helm CLI (hack/tool.sh, from the Go module proxy).
func build(t *testing.T, root, dir, version string) binaries {
	t.Helper()
	ldflags := "-X github.com/edgeplane/edgeplane/internal/shared/version.version=" + version
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", dir+"/", "./cmd/manager")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	helm, err := exec.Command("bash", filepath.Join(root, "hack", "tool.sh"), "helm").Output()
	if err != nil {
		t.Fatalf("hack/tool.sh helm: %v", err)
	}
	return binaries{manager: filepath.Join(dir, "manager"), helm: strings.TrimSpace(string(helm))}
}

// release cuts version into dir/dist/release/VERSION with make release's
// script, hack/release.sh, for this machine's platform, as a trial (the
// work tree may have changes, and CHANGELOG.md need not have the
// version's section), and checks its SHA256SUMS as install.md does.
func release(t *testing.T, root, dir, version, registry string) string {
	t.Helper()
	out := filepath.Join(dir, "dist", "release", version)
	platform := "linux/" + goruntime.GOARCH
	cmd := exec.Command("bash", filepath.Join("hack", "release.sh"), version)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "RELEASE_TRIAL=1", "RELEASE_OUT="+out, "RELEASE_REGISTRY="+registry,
		"IMAGE_PLATFORMS="+platform, "AGENT_PLATFORMS="+platform, "PLUGIN_PLATFORMS="+platform)
	if said, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh %s: %v\n%s", version, err, said)
	}
	run(t, out, "sha256sum", "--quiet", "-c", "SHA256SUMS")
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
