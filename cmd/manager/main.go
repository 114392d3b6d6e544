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

// Command manager runs the edgeplane controllers and the /api/v1 facade.
// With --controllers=false it is a read replica of the facade: no leader
// election, any number of copies.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	_ "time/tzdata" // --time-zone works without the host's zoneinfo

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/edgeplane/edgeplane/cmd/manager/flags"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/shared/version"
)

func init() { metrics.Registry.MustRegister(version.BuildInfo()) }

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

// run parses the flags and runs the manager until ctx is done.
func run(ctx context.Context, args []string) error {
	fs, v := flags.NewFlagSet()
	if err := fs.Parse(args); err != nil {
		return err
	}
	o := v.Options
	if v.ShowVersion {
		fmt.Println(version.String("manager"))
		return nil
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&v.Zap)))
	klog.SetLogger(ctrl.Log) // k8s.io/apiserver's front-proxy controllers log through klog
	log := ctrl.Log.WithName("setup")
	if n, was := goMaxProcs(runtime.GOMAXPROCS(0), runtime.NumCPU(), v.MinProcs, os.Getenv("GOMAXPROCS") != ""), runtime.GOMAXPROCS(0); n != was {
		runtime.GOMAXPROCS(n)
		log.Info("Raised GOMAXPROCS above the CPU count", "gomaxprocs", n, "cpus", runtime.NumCPU())
	}
	// Flags first: a bad flag is said as such, not as a missing kubeconfig.
	if err := o.Validate(); err != nil {
		return err
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	log.Info("Starting manager", "version", version.Version(), "controllers", o.RunControllers, "facade", o.API.BindAddress)
	return manager.Run(ctx, cfg, o)
}
