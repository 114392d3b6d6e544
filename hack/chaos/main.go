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

// Command chaos is make chaos: a storm of spec changes while the leading
// manager is killed every few seconds. Its last line is the summary; it
// exits non-zero when a version is duplicated, missing or left a gap.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/test/chaos"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	cfg := chaos.Config{Log: os.Stdout}
	flag.StringVar(&cfg.Bin, "bin", "bin", "Directory of the manager and edge-agent binaries.")
	flag.IntVar(&cfg.Services, "services", 50, "Dynamic services.")
	flag.IntVar(&cfg.Factor, "factor", 2, "Instances per service.")
	flag.IntVar(&cfg.Nodes, "nodes", 20, "Simulated nodes.")
	flag.IntVar(&cfg.Changes, "changes", 1000, "Spec changes, round robin over the services.")
	flag.Float64Var(&cfg.Rate, "rate", 20, "Spec changes per second.")
	flag.DurationVar(&cfg.KillEvery, "kill-every", 6*time.Second, "How long a leader leads before it is killed during the storm.")
	flag.IntVar(&cfg.MinKills, "min-kills", 2, "The storm goes on past --changes until the leader was killed this often.")
	flag.DurationVar(&cfg.LeaseDuration, "lease-duration", 3*time.Second, "The managers' leader election lease duration.")
	flag.DurationVar(&cfg.Timeout, "timeout", 3*time.Minute, "How long to wait for convergence after the storm.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	fmt.Println(res.Line())
	if res.Duplicates+res.Missing+res.Gaps > 0 {
		os.Exit(1)
	}
}
