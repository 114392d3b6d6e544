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

// Package version is edgeplane's version, stamped at build time, and the
// build-info metric every binary serves.
package version

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// version is set at build time:
// -ldflags "-X github.com/edgeplane/edgeplane/internal/shared/version.version=v0.1.0".
var version string

// Version is the stamped version, else the module's, else "(devel)".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// String is how a binary's --version answers.
func String(binary string) string {
	return binary + " " + Version() + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// BuildInfo is the gauge edgeplane_build_info, 1, labelled with the version
// and the Go version: fixed values, so one series per binary.
func BuildInfo() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "edgeplane_build_info",
		Help:        "The edgeplane build: 1, labelled with its version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": Version(), "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
