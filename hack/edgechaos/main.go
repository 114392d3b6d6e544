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

// Command edgechaos is make chaos-edge: the real manager, a real agent on
// a real engine and simulated agents while services change (rolled out in
// waves, some to an image that fails and is rolled back), the real agent's
// link cut, its engine restarted and the agent killed at random moments. Its last line is the summary; it exits non-zero when a change
// was duplicated or lost, or a container orphaned.
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

	"github.com/edgeplane/edgeplane/test/edgechaos"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	cfg := edgechaos.Config{Log: os.Stdout, Seed: uint64(time.Now().UnixNano())}
	flag.StringVar(&cfg.Bin, "bin", "bin", "Directory of the manager and edge-agent binaries.")
	flag.StringVar(&cfg.Engine, "engine", "podman", "The real agent's engine: podman or docker.")
	flag.IntVar(&cfg.SimNodes, "sim-nodes", 20, "Simulated nodes.")
	flag.IntVar(&cfg.SimServices, "sim-services", 10, "Dynamic services of two instances on the simulated nodes.")
	flag.IntVar(&cfg.RealServices, "real-services", 4, "Static services on the real node.")
	flag.Float64Var(&cfg.Rate, "rate", 2, "Spec changes per second, round robin over every service.")
	flag.DurationVar(&cfg.Duration, "duration", 3*time.Minute, "How long services change.")
	flag.IntVar(&cfg.Cuts, "cuts", 10, "Cuts of the real agent's link.")
	flag.IntVar(&cfg.EngineRestarts, "engine-restarts", 5, "Restarts of the real engine.")
	flag.IntVar(&cfg.Kills, "kills", 10, "SIGKILLs of the real agent.")
	flag.IntVar(&cfg.HubKills, "hub-kills", 5, "SIGKILLs of one of the two edge hub replicas every device reaches, each started again 1-3 s later.")
	flag.IntVar(&cfg.Stalls, "pull-stalls", 5, "Stalls of the real node's registry link, each longer than its agent's progress deadline.")
	flag.IntVar(&cfg.BadImages, "bad-images", 5, "Changes that also give a simulated service an image whose containers fail to start; the rollout in waves stops at its canary and is rolled back.")
	flag.DurationVar(&cfg.SimPullTime, "sim-pull-time", 2*time.Second, "How long each pull on a simulated node takes (every replacement pulls).")
	flag.DurationVar(&cfg.Timeout, "timeout", 3*time.Minute, "How long to wait for convergence.")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "Seed of the faults' moments.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Printf("edge-chaos: seed %d\n", cfg.Seed)
	res, err := edgechaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "edge-chaos:", err)
		os.Exit(1)
	}
	fmt.Println(res.Line())
	if res.Failed() {
		os.Exit(1)
	}
}
