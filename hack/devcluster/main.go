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

// Command devcluster runs a local control plane for `make dev`: etcd and
// kube-apiserver on loopback with their data in a temporary directory, the
// edgeplane CRDs installed, and a kubeconfig written for the other
// processes. kube-apiserver is configured for API aggregation, and with
// --aggregated-port the facade's APIService is registered for a facade on
// that local port, whose certificate devcluster writes. It stops both and
// removes the data on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/shared/version"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

func main() {
	kubeconfig := flag.String("kubeconfig-out", "kubeconfig", "Where to write the kubeconfig of the control plane.")
	namespaces := flag.String("lease-namespace", "edgeplane-node-lease", "Namespace to create for the agents' Leases.")
	aggregatedPort := flag.Int("aggregated-port", 0, "Register the facade's APIService for a facade serving TLS on this local port; 0 registers none.")
	tlsDir := flag.String("facade-tls-dir", "facade-tls", "Where to write that facade's certificate (tls.crt, tls.key, ca.crt): it names the Service the aggregator asks for.")
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.String("devcluster"))
		return
	}
	// One signal stops the control plane; later ones must not cut that
	// short (ctrl.SetupSignalHandler would exit at the second).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *namespaces, *aggregatedPort, *tlsDir); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, leaseNamespace string, aggregatedPort int, tlsDir string) error {
	aggDir, err := os.MkdirTemp("", "devcluster-aggregation")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(aggDir) }()
	env, cfg, c, err := testenv.Start(testenv.Aggregated(aggDir, nil))
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	if aggregatedPort != 0 {
		if err := registerFacade(ctx, c, aggregatedPort, tlsDir); err != nil {
			return err
		}
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	user, err := env.AddUser(envtest.User{Name: "developer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return err
	}
	fmt.Printf("control plane at %s, kubeconfig %s\n", cfg.Host, kubeconfig)
	<-ctx.Done()
	fmt.Println("stopping the control plane")
	return nil
}

// The Service the facade's APIService names in make dev.
const (
	facadeServiceNamespace = "default"
	facadeService          = "edgeplane-aggregated-api"
)

// registerFacade writes a certificate for the facade on port (a CA of its
// own, the leaf naming the Service as the aggregator asks for it) and
// registers the APIService. The caBundle is the facade's to set
// (--apiservice), as in a cluster.
func registerFacade(ctx context.Context, c client.Client, port int, dir string) error {
	ca, err := testenv.NewCA("edgeplane-dev-facade-ca")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	leaf := testenv.Leaf{CommonName: facadeService, DNSNames: []string{facadeService + "." + facadeServiceNamespace + ".svc", "localhost"}}
	crt, key, err := ca.IssueFiles(leaf, dir, "tls")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca.PEM, 0o600); err != nil {
		return err
	}
	fmt.Printf("facade certificate %s, key %s\n", crt, key)
	return testenv.RegisterAPIService(ctx, c, apiserver.AggregatedGroup, apiserver.AggregatedVersion, facadeServiceNamespace, facadeService, port, nil)
}
