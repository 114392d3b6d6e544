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

// Package image builds edgeplane's container images from static binaries
// with go-containerregistry: no base image, no registry, no engine. An
// image is one layer holding the binary, run as a numeric non-root user.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user the images run as: nobody's numeric id, so the
// image needs no /etc/passwd and Pod Security's restricted profile admits it.
const NonRoot = "65532:65532"

// Spec is one image to build.
type Spec struct {
	// Name is the reference it is tagged with, e.g. edgeplane/manager:v0.1.0.
	Name string
	// Binaries are the static binaries by platform, e.g. "linux/amd64".
	Binaries map[string]string
	// Entrypoint is where the binary goes in the image, e.g. /manager.
	Entrypoint string
	// Version is recorded as the OCI version label.
	Version string
}

// Build writes, into dir, one archive per platform that docker load and
// podman load take (<base>-<os>-<arch>.tar) and an OCI layout of the
// multi-platform index (<base>.oci/), to push with skopeo or crane.
// It returns the archives by platform.
func Build(s Spec, dir string) (map[string]string, error) {
	ref, err := name.NewTag(s.Name)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(ref.RepositoryStr())
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	archives := map[string]string{}
	for platform, bin := range s.Binaries {
		os_, arch, ok := strings.Cut(platform, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q: want os/arch", platform)
		}
		img, err := build(s, bin, os_, arch)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", platform, err)
		}
		archive := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.tar", base, os_, arch))
		if err := tarball.WriteToFile(archive, ref, img); err != nil {
			return nil, err
		}
		archives[platform] = archive
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: os_, Architecture: arch}}})
	}
	oci := filepath.Join(dir, base+".oci")
	if err := os.RemoveAll(oci); err != nil {
		return nil, err
	}
	if _, err := layout.Write(oci, idx); err != nil {
		return nil, err
	}
	return archives, nil
}

// build is one platform's image: the binary in one layer, run as NonRoot.
func build(s Spec, bin, os_, arch string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// Owned by root and not writable by the user who runs it.
	if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(s.Entrypoint, "/"), Mode: 0o555, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = os_, arch
	cfg.Config.User, cfg.Config.Entrypoint, cfg.Config.WorkingDir = NonRoot, []string{s.Entrypoint}, "/"
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    strings.TrimPrefix(s.Entrypoint, "/"),
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	// A fixed time, so that the same binary makes the same image.
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	return mutate.ConfigFile(img, cfg)
}
