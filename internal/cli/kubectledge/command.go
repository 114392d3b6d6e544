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

// Package kubectledge is the kubectl plugin kubectl-edge: its commands
// work on edgeplane's objects as kubectl's own do on Deployments, with
// kubectl's flags for the cluster, the user and the namespace.
package kubectledge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/shared/version"
)

// requestTimeout bounds each command's calls to the API server, unless
// --request-timeout says otherwise.
const requestTimeout = 30 * time.Second

// NewCommand is kubectl edge: kubectl runs kubectl-edge on PATH as
// "kubectl edge".
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:           "kubectl-edge",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl edge"},
		Short:         "Operate edgeplane's edge services",
		Long:          "kubectl edge operates edgeplane's EdgeServices: their rollout history and status, a pause, a return to an earlier revision, and a service made from a template.",
		Version:       version.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	flags.AddFlags(root.PersistentFlags())

	// run gives a command a client, the namespace and a deadline.
	run := func(cmd *cobra.Command, f func(ctx context.Context, r *rollout, namespace string) error) error {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return err
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = requestTimeout
		}
		namespace, _, err := flags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return err
		}
		scheme := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			return err
		}
		if err := edgev1alpha1.AddToScheme(scheme); err != nil {
			return err
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		return f(cmd.Context(), &rollout{c: c, out: streams.Out, timeout: cfg.Timeout}, namespace)
	}
	// once bounds a command that makes a few calls by one deadline.
	once := func(ctx context.Context, r *rollout) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, r.timeout)
	}

	rolloutCmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the rollout of an edge service",
		Long:  "Manage the rollout of an EdgeService: its history of revisions, its progress, a pause, and a return to one of them.",
	}
	var revision int64
	history := &cobra.Command{
		Use:   "history (es/NAME | NAME)",
		Short: "View the rollout history of an edge service",
		Long: "View an EdgeService's revisions, one per change of its deployment configuration, each with its image, " +
			"when it was recorded and what it changed from the revision before. --revision shows one in full.",
		Example: "  kubectl edge rollout history es/gateway\n  kubectl edge rollout history es/gateway --revision=3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := serviceName(args[0])
			if err != nil {
				return err
			}
			if revision < 0 {
				return fmt.Errorf("--revision must be a revision number, not %d", revision)
			}
			return run(cmd, func(ctx context.Context, r *rollout, ns string) error {
				ctx, cancel := once(ctx, r)
				defer cancel()
				return r.history(ctx, ns, name, revision)
			})
		},
	}
	history.Flags().Int64Var(&revision, "revision", 0, "Show the details of this revision.")
	var toRevision int64
	undo := &cobra.Command{
		Use:   "undo (es/NAME | NAME)",
		Short: "Return an edge service to an earlier revision",
		Long: "Write the deployment configuration of an earlier revision back into the EdgeService's spec: the " +
			"revision before the current one, or --to-revision. The manager records it as a new revision, as any " +
			"change. A revision that matches the current configuration changes nothing.",
		Example: "  kubectl edge rollout undo es/gateway\n  kubectl edge rollout undo es/gateway --to-revision=3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := serviceName(args[0])
			if err != nil {
				return err
			}
			if toRevision < 0 {
				return fmt.Errorf("--to-revision must be a revision number, not %d", toRevision)
			}
			return run(cmd, func(ctx context.Context, r *rollout, ns string) error {
				ctx, cancel := once(ctx, r)
				defer cancel()
				return r.undo(ctx, ns, name, toRevision)
			})
		},
	}
	undo.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to return to; the one before the current if not set.")
	var timeout time.Duration
	status := &cobra.Command{
		Use:   "status (es/NAME | NAME)",
		Short: "Follow the rollout of an edge service until it is done",
		Long: "Follow an EdgeService's rollout, printing its progress (instances ready at the current revision of all), " +
			"until every instance runs it. Exits non-zero when the rollout stalls (an instance failed or could not be " +
			"placed, the canary failed, or the progress deadline passed: the service's Stalled condition) or --timeout passes.",
		Example: "  kubectl edge rollout status es/gateway\n  kubectl edge rollout status es/gateway --timeout=5m",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := serviceName(args[0])
			if err != nil {
				return err
			}
			if timeout < 0 {
				return fmt.Errorf("--timeout must not be negative, not %v", timeout)
			}
			return run(cmd, func(ctx context.Context, r *rollout, ns string) error {
				return r.status(ctx, ns, name, timeout, r.timeout)
			})
		},
	}
	status.Flags().DurationVar(&timeout, "timeout", 0, "How long to wait before giving up; 0 waits until the rollout is done or stalls.")
	pauseOrResume := func(paused bool) *cobra.Command {
		verb, short, long := "pause", "Pause the rollout of an edge service",
			"Hold an EdgeService's rollout where it is: no further instance moves to the current revision, and a change "+
				"of the spec waits, until it is resumed. Instances placed meanwhile run the revision the others run."
		if !paused {
			verb, short, long = "resume", "Resume a paused rollout of an edge service",
				"Let a paused EdgeService's rollout go on from where it stopped; its progress deadline counts from now."
		}
		return &cobra.Command{
			Use:     verb + " (es/NAME | NAME)",
			Short:   short,
			Long:    long,
			Example: "  kubectl edge rollout " + verb + " es/gateway",
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				name, err := serviceName(args[0])
				if err != nil {
					return err
				}
				return run(cmd, func(ctx context.Context, r *rollout, ns string) error {
					ctx, cancel := once(ctx, r)
					defer cancel()
					return r.setPaused(ctx, ns, name, paused)
				})
			},
		}
	}
	rolloutCmd.AddCommand(history, status, undo, pauseOrResume(true), pauseOrResume(false))

	var d deployOptions
	deploy := &cobra.Command{
		Use:   "deploy --from-template=/FOLDER/NAME (--nodes=NODE,... | --factor=N) [--name=NAME]",
		Short: "Create an edge service from a template",
		Long: "Create an EdgeService from a ProvisionTemplate of the path-label tree: the template's image and the " +
			"settings it gives a new service, in the template's folder, static on --nodes or dynamic with --factor " +
			"instances. The service is named after the template unless --name says otherwise.",
		Example: "  kubectl edge deploy --from-template=/plant-a/sensor-gateway --nodes=edge-01,edge-02\n" +
			"  kubectl edge deploy --from-template=/plant-a/sensor-gateway --factor=10 --name=gateway -n plant-a",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if d.template == "" {
				return fmt.Errorf("--from-template is required: the template's path, /FOLDER/NAME")
			}
			return run(cmd, func(ctx context.Context, r *rollout, ns string) error {
				ctx, cancel := once(ctx, r)
				defer cancel()
				return r.deploy(ctx, ns, d)
			})
		},
	}
	deploy.Flags().StringVar(&d.template, "from-template", "", "The template's path in the tree, /FOLDER/NAME.")
	deploy.Flags().StringVar(&d.templateNamespace, "template-namespace", "", "The namespace of the templates (the facade's --namespace); the service's if not set.")
	deploy.Flags().StringVar(&d.name, "name", "", "The service's name; the template's if not set.")
	deploy.Flags().StringSliceVar(&d.nodes, "nodes", nil, "Run one instance on each of these nodes (a static service).")
	deploy.Flags().Int32Var(&d.factor, "factor", 0, "Run this many instances over the fitting online nodes (a dynamic service).")

	// The node commands write the join command to stdout alone, so that it
	// can be piped to the device, and what it is to stderr.
	nodeCmd := &cobra.Command{
		Use:   "node SUBCOMMAND",
		Short: "Add edge nodes and manage how they join the edge hub",
		Long:  "Add an EdgeNode with a one-time join token for its device, issue a new token, or revoke the node's certificates.",
	}
	var no nodeOptions
	nodeRun := func(cmd *cobra.Command, f func(ctx context.Context, n *nodes) error) error {
		return run(cmd, func(ctx context.Context, r *rollout, _ string) error {
			ctx, cancel := once(ctx, r)
			defer cancel()
			return f(ctx, &nodes{rollout: r, errOut: streams.ErrOut})
		})
	}
	add := &cobra.Command{
		Use:   "add NAME [--labels=KEY=VALUE,...] [--type=TYPE] [--arch=ARCH] [--address=HOST:PORT] [--ttl=DURATION] [--hub=URL]",
		Short: "Add an edge node and print the command that joins its device",
		Long: "Create an EdgeNode and a join token for it, and print the edge-agent join command to run on the device: " +
			"the hub's URL, the token and the hash of the hub's CA, read from the ConfigMap " + hubapi.InfoConfigMap + " the hub " +
			"publishes in --hub-namespace. The token joins one device once, until --ttl passes. The name is all a node needs: " +
			"its agent reports its address, and --address sets one that wins over it.",
		Example: "  kubectl edge node add edge-01\n" +
			"  kubectl edge node add edge-02 --labels=site=plant-a,line=3 --type=linux --arch=arm64\n" +
			"  kubectl edge node add edge-03 --address=10.0.0.8:8080 --ttl=24h --hub=https://hub.plant-a.example:8443",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			no.name = args[0]
			if err := no.check(); err != nil {
				return err
			}
			return nodeRun(cmd, func(ctx context.Context, n *nodes) error { return n.add(ctx, no) })
		},
	}
	add.Flags().StringVar(&no.labels, "labels", "", "Labels of the node, KEY=VALUE pairs joined by commas; dynamic services are placed by them.")
	add.Flags().StringVar(&no.typ, "type", "", "The node's expected operating system, such as linux or sylixos; its agent reports the real one.")
	add.Flags().StringVar(&no.arch, "arch", "", "The node's expected CPU architecture, such as amd64 or arm64; its agent reports the real one.")
	add.Flags().StringVar(&no.address, "address", "", "Where the node's agent is reached, HOST:PORT, when its agent cannot tell (NAT, a forwarded port); empty: the address its agent reports.")
	token := &cobra.Command{
		Use:   "token NAME [--ttl=DURATION] [--hub=URL]",
		Short: "Print a new join command for an edge node",
		Long: "Create a new join token for an existing EdgeNode, for a device that lost its credentials, was replaced or " +
			"was revoked, and print the edge-agent join command to run on it. Tokens issued before stay valid until used or expired.",
		Example: "  kubectl edge node token edge-01\n  kubectl edge node token edge-01 --ttl=15m",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			no.name = args[0]
			if err := no.check(); err != nil {
				return err
			}
			return nodeRun(cmd, func(ctx context.Context, n *nodes) error { return n.token(ctx, no) })
		},
	}
	for _, c := range []*cobra.Command{add, token} {
		c.Flags().DurationVar(&no.ttl, "ttl", time.Hour, "How long the join token is good for; at most 168h.")
		c.Flags().StringVar(&no.hub, "hub", "", "The hub's URL as the device reaches it, https://HOST:PORT; the URL the hub published if not set.")
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Refuse an edge node's certificates and its unused join tokens",
		Long: "Refuse every certificate the hub issued to the node until now, and delete the node's join tokens that are " +
			"not used yet. The device is locked out until it joins again with a new token (kubectl edge node token).",
		Example: "  kubectl edge node revoke edge-01",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkHubNamespace(no.hubNamespace); err != nil {
				return err
			}
			return nodeRun(cmd, func(ctx context.Context, n *nodes) error { return n.revoke(ctx, args[0], no.hubNamespace) })
		},
	}
	nodeCmd.PersistentFlags().StringVar(&no.hubNamespace, "hub-namespace", defaultHubNamespace, "The namespace of the edge hub, where the join tokens are.")
	nodeCmd.AddCommand(add, token, revoke)
	root.AddCommand(rolloutCmd, deploy, nodeCmd)
	return root
}

// serviceName reads an EdgeService's name from "es/NAME", the kind's
// other names, or NAME alone.
func serviceName(arg string) (string, error) {
	kind, name, typed := strings.Cut(arg, "/")
	if !typed {
		kind, name = "es", arg
	}
	switch strings.ToLower(kind) {
	case "es", "edgeservice", "edgeservices", "edgeservice.edge.edgeplane.io", "edgeservices.edge.edgeplane.io":
	default:
		return "", fmt.Errorf("%q is not an edge service: name one as es/NAME", arg)
	}
	if name == "" {
		return "", fmt.Errorf("%q names no edge service: name one as es/NAME", arg)
	}
	return name, nil
}
