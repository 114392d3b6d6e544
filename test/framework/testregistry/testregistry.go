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

// Package testregistry runs the CNCF distribution registry on loopback for
// the engine suite: a private registry with basic authentication.
package testregistry

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"

	// The registry's in-memory storage and htpasswd authentication.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// Registry is the CNCF distribution registry on loopback, in memory, with
// basic authentication from an htpasswd file. Engines pull from loopback over plain HTTP (Docker allows
// 127.0.0.0/8; hack/engine.sh's Podman configuration does too).
type Registry struct {
	// Host is host:port, the registry part of image names.
	Host string
	srv  *http.Server
}

// StartRegistry serves a registry that lets in users (name to password).
func Start(users map[string]string, dir string) (*Registry, error) {
	htpasswd := filepath.Join(dir, "htpasswd")
	var lines []string
	for u, p := range users {
		hash, err := bcrypt.GenerateFromPassword([]byte(p), bcrypt.MinCost)
		if err != nil {
			return nil, err
		}
		lines = append(lines, u+":"+string(hash))
	}
	if err := os.WriteFile(htpasswd, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg := &configuration.Configuration{Version: "0.1"}
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "edgeplane-test", "path": htpasswd}}
	cfg.Log.Level = "error"
	cfg.Log.AccessLog.Disabled = true
	// handlers.NewApp logs through logrus's standard logger, which
	// cfg.Log does not configure: each request's lines (and an error line
	// for each blob a push asks about first) would bury a failing suite's
	// output and a bench's figures. Clients get every error as a response.
	logrus.SetLevel(logrus.FatalLevel)
	cfg.HTTP.Addr = l.Addr().String()
	app := handlers.NewApp(context.Background(), cfg)
	r := &Registry{Host: l.Addr().String(), srv: &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := r.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "registry:", err)
		}
	}()
	return r, nil
}

// Close stops the registry.
func (r *Registry) Close() error { return r.srv.Close() }

// PushBox pushes, as user, a one-layer image of Debian's static busybox
// (whose default command sleeps until SIGTERM) as <host>/<repo>:<tag>; the
// layer differs per repository and tag.
func (r *Registry) PushBox(repo, tag, user, password string) error {
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return fmt.Errorf("the image is made of Debian's busybox-static: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "bin/busybox", Mode: 0o755, Size: int64(len(bb)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(bb); err != nil {
		return err
	}
	// A file naming the image makes each repository's layer its own: an
	// engine that pulled one image has none of another's bytes.
	id := []byte(repo + ":" + tag + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: "etc/edgeplane-image", Mode: 0o644, Size: int64(len(id)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(id); err != nil {
		return err
	}
	for _, applet := range []string{"sh", "sleep"} {
		if err := tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Linkname: "busybox", Typeflag: tar.TypeSymlink, Mode: 0o777}); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goruntime.GOARCH
	cf.Config = v1.Config{Env: []string{"PATH=/bin"}, Cmd: []string{"sh", "-c", `trap "exit 0" TERM; sleep 2147483647 & wait`}}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	ref, err := name.ParseReference(r.Host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return err
	}
	return remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: user, Password: password}))
}
