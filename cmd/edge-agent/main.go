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

// Command edge-agent is the reference edge agent. By default
// (--runtime=docker) it runs one node's containers on a Docker Engine API
// (Docker or Podman); with --runtime=sim it simulates one node, or many
// (--nodes) as a load generator, for make dev, tests and scale runs.
//
// It reaches the cluster with a kubeconfig, or through the edge hub once
// the device joined it: edge-agent join --hub https://HOST:PORT --token
// ID.SECRET --ca-cert-hash sha256:... saves the node's identity in
// <state-dir>/hub, and the agent started without a kubeconfig uses it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/cmd/edge-agent/flags"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/app"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/shared/version"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "edge-agent:", err)
		os.Exit(1)
	}
}

// checkJoin validates the flags before anything is sent: a token joins once.
func checkJoin(j flags.Join, fs *flag.FlagSet, stateDir string) error {
	if j.Hub == "" || j.Token == "" || j.CAHash == "" {
		return errors.New("edge-agent join needs --hub, --token and --ca-cert-hash, as kubectl edge node add prints them")
	}
	if _, err := hubconn.CheckHubURL(j.Hub); err != nil {
		return err
	}
	if _, err := hubapi.ParseToken(j.Token); err != nil {
		return fmt.Errorf("--token: %w", err)
	}
	if err := hubapi.CheckCAHash(j.CAHash); err != nil {
		return err
	}
	if flagSet(fs, "kubeconfig") {
		return errors.New("--kubeconfig: edge-agent join runs the agent through the hub, without a kubeconfig")
	}
	if flagSet(fs, "lease-namespace") {
		return errors.New("--lease-namespace: the hub names the namespace of the node's Lease")
	}
	if stateDir == "" {
		return errors.New("--state-dir: edge-agent join keeps the node's identity in <state-dir>/hub: give it a directory")
	}
	return nil
}

func run(ctx context.Context, args []string) error {
	join := len(args) > 0 && args[0] == "join"
	cmd := "edge-agent"
	if join {
		args, cmd = args[1:], "edge-agent join"
	}
	fs, v := flags.NewFlagSet(cmd, join)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o, so := v.Agent, v.Sim
	if join && fs.NArg() > 0 {
		return fmt.Errorf("edge-agent join: unexpected argument %q", fs.Arg(0))
	}
	if !join && fs.Arg(0) == "join" {
		return errors.New("join is a subcommand: it comes before the flags (edge-agent join --hub ...)")
	}
	if v.ShowVersion {
		fmt.Println(version.String("edge-agent"))
		return nil
	}
	if v.PrintRBAC != "" {
		fmt.Print(agent.RBAC(v.PrintRBAC, o.LeaseNamespace))
		return nil
	}
	if join {
		if err := checkJoin(v.Join, fs, v.StateDir); err != nil {
			return err
		}
	}
	advertise, err := advertiseAddress(fs, v)
	if err != nil {
		return err
	}
	if o.MaxInstances < 1 || o.MaxInstances > 2000 {
		return fmt.Errorf("--max-instances %d: must be 1 to 2000 (status.containers holds 2,048 entries, some for containers edgeplane does not manage)", o.MaxInstances)
	}
	c := app.Config{
		Runtime: v.Runtime, RuntimeEndpoint: v.RuntimeEndpoint, ImageRegistry: v.ImageRegistry,
		Kubeconfig: flagSet(fs, "kubeconfig"), LeaseNamespaceSet: flagSet(fs, "lease-namespace"),
		NodeName: v.NodeName, Advertise: advertise, NodePrefix: v.NodePrefix, Nodes: v.Nodes,
		Types: strings.Split(v.Types, ","), Arches: strings.Split(v.Arches, ","),
		HubIdentities: v.HubIdentities, QPS: v.QPS, Burst: v.Burst, PprofAddr: v.PprofAddr,
	}
	if v.StateDir != "" {
		c.HubDir = filepath.Join(v.StateDir, "hub")
	}
	if join {
		c.Join = &hubconn.JoinOptions{Hub: v.Join.Hub, Token: v.Join.Token, CAHash: v.Join.CAHash}
		c.JoinRun = v.Join.Run
	}
	o.StateDir = v.StateDir
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&v.Zap)))
	o.Log = ctrl.Log.WithName("edge-agent")
	switch v.Runtime {
	case "sim":
		if !flagSet(fs, "state-dir") {
			o.StateDir = "" // simulated containers do not outlive the process
		}
		for _, re := range []struct {
			flag, v string
			to      **regexp.Regexp
		}{{"fail-images", v.FailImages, &so.FailImages}, {"crash-images", v.CrashImages, &so.CrashImages}, {"slow-pulls", v.SlowPulls, &so.SlowPulls}, {"stall-pulls", v.StallPulls, &so.StallPulls}} {
			if *re.to, err = optionalRegexp(re.v); err != nil {
				return fmt.Errorf("--%s: %w", re.flag, err)
			}
		}
		for _, s := range v.Silences {
			parts := strings.Split(s, ":")
			if len(parts) != 3 {
				return fmt.Errorf("--silence %q: want node:after:for", s)
			}
			after, err1 := time.ParseDuration(parts[1])
			dur, err2 := time.ParseDuration(parts[2])
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("--silence %q: %w", s, err)
			}
			c.Silences = append(c.Silences, sim.Silence{Node: parts[0], After: after, For: dur})
		}
		c.Sim = so
	case "docker":
		for _, f := range []string{"fail-images", "crash-images", "slow-pulls", "stall-pulls", "silence", "start-delay", "pull-time", "system-containers", "nodes", "hub-identities"} {
			if flagSet(fs, f) {
				return fmt.Errorf("--%s is a setting of the simulator (--runtime=sim), not of --runtime=docker", f)
			}
		}
	}
	if c.Labels, err = parseLabels(v.Labels); err != nil {
		return err
	}
	c.Agent = o
	return app.Run(ctx, c)
}

// parseLabels reads --labels, k=v pairs separated by commas.
func parseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--labels: %q is not k=v", kv)
		}
		labels[k] = v
	}
	return labels, nil
}

// flagSet says whether a flag was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func optionalRegexp(s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	return regexp.Compile(s)
}

// advertiseAddress is the address given to the one node played,
// --advertise-address or --address; "" leaves it to the node's connection.
func advertiseAddress(fs *flag.FlagSet, v *flags.Values) (string, error) {
	a := v.AdvertiseAddress
	if flagSet(fs, "address") {
		if flagSet(fs, "advertise-address") && v.Address != a {
			return "", fmt.Errorf("--address %q and --advertise-address %q: give one", v.Address, a)
		}
		a = v.Address
	}
	if a != "" && !edgev1alpha1.ValidAddress(a) {
		return "", fmt.Errorf("--advertise-address %q: %s", a, edgev1alpha1.AddressMessage)
	}
	return a, nil
}
