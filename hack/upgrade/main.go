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

// Command upgrade is make upgrade: the fleet upgraded from the previous
// release (hack/releases.tsv, built from its commit) to the working tree
// while a rollout moves in waves. Its last line is the summary; it exits
// non-zero when anything was lost, duplicated, restarted or declared
// offline, the facade failed, or the rollout was not under way at every
// step.
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

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/upgrade"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	cfg := upgrade.Config{Log: os.Stdout}
	flag.StringVar(&cfg.Engine, "engine", "podman", "The real node's engine: podman, docker, or none.")
	flag.IntVar(&cfg.SimNodes, "sim-nodes", 20, "Simulated nodes upgraded with the control plane.")
	flag.IntVar(&cfg.LagNodes, "lag-nodes", 5, "Simulated nodes that keep the previous release's agent.")
	flag.DurationVar(&cfg.SimPullTime, "pull-time", 10*time.Second, "How long a simulated node pulls the rollout's image.")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "How long to wait for the fleet to settle, each time.")
	flag.Parse()
	if cfg.Engine == "none" {
		cfg.Engine = ""
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg upgrade.Config) error {
	dir, err := os.MkdirTemp("", "edgeplane-upgrade-bin")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	prev, from, to, err := upgrade.Versions(testenv.RepoRoot(), dir)
	if err != nil {
		return err
	}
	cfg.From, cfg.To = from, to
	res, err := upgrade.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Println(res.Line())
	if res.Failed() {
		return fmt.Errorf("the upgrade from %s lost, duplicated, restarted or offlined something, the facade failed, or the rollout was not under way throughout", prev.Version)
	}
	return nil
}
