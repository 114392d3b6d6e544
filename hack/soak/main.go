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

// Command soak is make soak: the whole system for an hour under steady
// churn and recurring faults (test/soak, docs/soak.md). It prints a table
// of every sampled series and, last, the summary line; it exits non-zero
// when a series grew, a version was missing or duplicated, a service
// kept more records than its history limit or did not settle, the
// facade's p99 at the end was worse than twice the start's, or the real
// engine held other containers than one per instance of its node.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/test/soak"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // the binaries log to their own files
	cfg := soak.Config{Log: os.Stdout}
	flag.StringVar(&cfg.Bin, "bin", "bin", "Directory of the manager and edge-agent binaries.")
	flag.StringVar(&cfg.Out, "out", "dist/soak", "Directory of samples.csv, a plot per series and every process's log (logs/).")
	flag.StringVar(&cfg.FiguresPage, "figures", "", "Write the run's figures as a Markdown page here (docs/figures/soak.md), its plots in a folder beside it.")
	flag.DurationVar(&cfg.Duration, "duration", time.Hour, "How long the churn and the faults go on.")
	flag.IntVar(&cfg.Nodes, "nodes", 200, "Simulated nodes in the agent that is never cut.")
	flag.IntVar(&cfg.CutNodes, "cut-nodes", 0, "Simulated nodes in a second agent, cut off and back; 0: a tenth of --nodes, 5 at least.")
	flag.IntVar(&cfg.Services, "services", 0, "Long-lived services of two instances, every other one rolled out in waves; 0: half of --nodes.")
	flag.Float64Var(&cfg.Rate, "rate", 1, "Churn actions on the long-lived services per second.")
	flag.DurationVar(&cfg.EphemeralEvery, "ephemeral-every", 30*time.Second, "How often a folder, a template and a service from it are created through the facade.")
	flag.IntVar(&cfg.EphemeralKeep, "ephemeral-keep", 4, "Short-lived services kept; past it the oldest is deleted with its template and folder.")
	flag.DurationVar(&cfg.FailoverEvery, "failover-every", 5*time.Minute, "How often the leading manager is SIGKILLed (0: never).")
	flag.DurationVar(&cfg.CutEvery, "cut-every", 2*time.Minute, "How often the cut nodes are taken off the hub, by SIGSTOP of their agent and by cutting their link in turn (0: never).")
	flag.DurationVar(&cfg.CutFor, "cut-for", 15*time.Second, "How long a cut lasts: less than the node grace period (40 s).")
	flag.DurationVar(&cfg.PauseEvery, "pause-every", 20*time.Minute, "How often kube-apiserver is stopped (SIGSTOP) (0: never).")
	flag.DurationVar(&cfg.PauseFor, "pause-for", 30*time.Second, "How long kube-apiserver stays stopped.")
	flag.Float64Var(&cfg.ReadRate, "read-rate", 20, "Facade reader requests per second at most, over the read replica's and the managers' facades.")
	flag.DurationVar(&cfg.ConsoleEvery, "console-every", 5*time.Second, "The web console's refresh (refreshEvery in apiserver/console/app.js).")
	flag.DurationVar(&cfg.SampleEvery, "sample-every", time.Minute, "How often every series is sampled.")
	flag.DurationVar(&cfg.EventTTL, "event-ttl", 5*time.Minute, "kube-apiserver's --event-ttl: shorter than the warm-up, so that the count of Events can settle.")
	flag.DurationVar(&cfg.LeaseDuration, "lease-duration", 15*time.Second, "The managers' leader election lease duration.")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "How long the setup's waits and the settling after the churn may take.")
	flag.StringVar(&cfg.Engine, "engine", "podman", "The real-engine node's engine: podman, docker, or none for no real node. One that cannot be started leaves the run without it, and says why.")
	flag.IntVar(&cfg.RealServices, "real-services", 2, "Static services on the real-engine node.")
	flag.DurationVar(&cfg.RealChangeEvery, "real-change-every", 2*time.Minute, "How often each of the real node's services changes (0: never).")
	flag.Parse()
	if cfg.CutNodes == 0 {
		cfg.CutNodes = max(5, cfg.Nodes/10)
	}
	if cfg.Services == 0 {
		cfg.Services = max(1, cfg.Nodes/2)
	}
	// An interrupt or a termination ends the run as its end does: every
	// process it started is stopped on the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res, err := soak.Run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	fmt.Println(res.Line())
	if res.Failed() {
		os.Exit(1)
	}
}
