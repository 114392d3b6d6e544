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

// Package flags builds the manager's command line. cmd/manager parses it
// and hack/docs documents it from the same FlagSet, so that the command
// reference cannot drift from the flags.
package flags

import (
	"flag"

	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/edgeplane/edgeplane/internal/manager"
)

// Values are what the manager's flags set.
type Values struct {
	Options     manager.Options
	ShowVersion bool
	MinProcs    int
	Zap         zap.Options
}

// NewFlagSet returns the manager's flags, bound to Values at their
// defaults.
func NewFlagSet() (*flag.FlagSet, *Values) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	v := &Values{Options: manager.DefaultOptions()}
	v.Options.AddFlags(fs)
	fs.BoolVar(&v.ShowVersion, "version", false, "Print the version and exit.")
	fs.IntVar(&v.MinProcs, "min-procs", 4, "Run at least this many Go processors (GOMAXPROCS) when Go would use every CPU and they are fewer: on a machine of few cores, facade requests otherwise wait up to Go's 10 ms preemption behind busy reconcilers. Left alone under a CPU limit or a GOMAXPROCS variable; 0 disables it.")
	config.RegisterFlags(fs)
	v.Zap.BindFlags(fs)
	return fs, v
}
