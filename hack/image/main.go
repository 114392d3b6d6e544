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

// Command image builds one of edgeplane's images from static binaries
// (make image): per-platform archives for docker load and podman load, and
// a multi-platform OCI layout to push.
//
//	go run ./hack/image --name edgeplane/manager:v0.1.0 --entrypoint /manager \
//	  --binary linux/amd64=bin/image/linux-amd64/manager --binary linux/arm64=... --out dist/images
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/edgeplane/edgeplane/test/framework/image"
)

type binaries map[string]string

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }
func (b binaries) Set(v string) error {
	platform, path, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q: want os/arch=path", v)
	}
	b[platform] = path
	return nil
}

func main() {
	s := image.Spec{Binaries: binaries{}}
	flag.StringVar(&s.Name, "name", "", "Reference to tag the image with, e.g. edgeplane/manager:v0.1.0.")
	flag.StringVar(&s.Entrypoint, "entrypoint", "", "Path of the binary in the image, e.g. /manager.")
	flag.StringVar(&s.Version, "version", "", "Version recorded in the image's labels.")
	flag.Var(binaries(s.Binaries), "binary", "os/arch=path of a static binary; repeat for each platform.")
	out := flag.String("out", "dist/images", "Directory of the archives and the OCI layout.")
	flag.Parse()
	if s.Name == "" || s.Entrypoint == "" || len(s.Binaries) == 0 {
		fmt.Fprintln(os.Stderr, "image: --name, --entrypoint and at least one --binary are needed")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	archives, err := image.Build(s, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	platforms := make([]string, 0, len(archives))
	for p := range archives {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	for _, p := range platforms {
		fmt.Printf("%s %s: %s\n", s.Name, p, archives[p])
	}
}
