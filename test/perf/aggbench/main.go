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

// Command aggbench measures the facade both ways into it (make
// bench-aggregated), side by side in one run on one kube-apiserver
// configured for aggregation, with NODES EdgeNodes:
//
//   - direct: the facade (a read replica process: TLS, auth kubernetes),
//     called with a bearer token;
//   - aggregated: the same process through kube-apiserver's APIService;
//   - trivial aggregated: a backend in a process of its own answering a
//     fixed envelope (the facade's own answer to the request, captured
//     once: the same bytes), behind an APIService of its own on the same
//     kube-apiserver: the ceiling the aggregation layer allows.
//
// Each is loaded in turn by CONNS connections (HTTP/1.1, one TCP connection
// each) asking for the node list with pageSize 10, as one user whose roles
// grant it at both layers. The last line is
// aggbench: nodes= conns= direct_rps= direct_p99_ms= aggregated_rps= aggregated_p99_ms= trivial_rps= trivial_p99_ms= aggregated_vs_trivial=
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The trivial backend's group: its discovery is just enough for its
// APIService to be Available.
const (
	trivialGroup   = "trivial.bench.edgeplane.io"
	trivialVersion = "v1"
)

func main() {
	nodes := flag.Int("nodes", 1000, "EdgeNodes in the cluster.")
	conns := flag.Int("conns", 32, "Connections loading each way at once.")
	duration := flag.Duration("duration", 20*time.Second, "How long each way is loaded.")
	bin := flag.String("bin", "bin", "Directory of the manager binary.")
	profile := flag.String("profile", "", "Write a 10 s CPU profile of the facade under the aggregated load to this file.")
	trivial := flag.String("trivial", "", "Serve only the trivial backend on this address, with TLS from --trivial-cert and --trivial-key (the run starts itself so).")
	trivialCert := flag.String("trivial-cert", "", "")
	trivialKey := flag.String("trivial-key", "", "")
	trivialBody := flag.String("trivial-body", "", "")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if *trivial != "" {
		serveTrivial(ctx, *trivial, *trivialCert, *trivialKey, *trivialBody)
		return
	}
	ctx, stop := context.WithTimeout(ctx, 10*time.Minute)
	defer stop()
	if err := run(ctx, *nodes, *conns, *duration, *bin, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "aggbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, nodes, conns int, duration time.Duration, bin, profile string) error {
	dir, err := os.MkdirTemp("", "aggbench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	env, cfg, c, err := testenv.Start(testenv.Aggregated(dir, nil))
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	if err := createNodes(ctx, c, nodes); err != nil {
		return err
	}

	// The facade: a read replica process on TLS, with its APIService.
	ca, err := testenv.NewCA("aggbench-ca")
	if err != nil {
		return err
	}
	facadeAddr, trivialAddr, pprofAddr := freeAddr(), freeAddr(), freeAddr()
	facadeCert, facadeKey, err := ca.IssueFiles(testenv.Leaf{CommonName: "facade", DNSNames: []string{"edgeplane-facade.default.svc"}}, dir, "facade")
	if err != nil {
		return err
	}
	trivialCert, trivialKey, err := ca.IssueFiles(testenv.Leaf{CommonName: "trivial", DNSNames: []string{"trivial.default.svc"}}, dir, "trivial")
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(env, kubeconfig); err != nil {
		return err
	}
	manager, err := procs.Start(ctx, dir, "facade", filepath.Join(bin, "manager"), "--kubeconfig", kubeconfig, "--controllers=false",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--api-bind-address", facadeAddr, "--api-namespace", "default",
		"--auth", "kubernetes", "--tls-cert-file", facadeCert, "--tls-private-key-file", facadeKey, "--pprof-bind-address", pprofAddr)
	if err != nil {
		return err
	}
	defer procs.Stop(manager)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// One user, granted the node list at both layers, and the trivial
	// backend's path as kube-apiserver reads it.
	token, user, err := loadUser(ctx, cfg, c)
	if err != nil {
		return err
	}
	// The trivial backend answers the facade's own bytes for the request,
	// fixed: the same payload through the same proxy, none of the work.
	const path = "/api/v1/node?pageNum=1&pageSize=10"
	direct := &rest.Config{BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca.PEM}}
	body, err := waitOK(ctx, direct, "https://"+facadeAddr+path)
	if err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	bodyFile := filepath.Join(dir, "body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		return err
	}
	trivial, err := procs.Start(ctx, dir, "trivial", self, "--trivial", trivialAddr, "--trivial-cert", trivialCert, "--trivial-key", trivialKey, "--trivial-body", bodyFile)
	if err != nil {
		return err
	}
	defer procs.Stop(trivial)
	for _, as := range []struct {
		group, version, service, addr string
	}{{apiserver.AggregatedGroup, apiserver.AggregatedVersion, "edgeplane-facade", facadeAddr}, {trivialGroup, trivialVersion, "trivial", trivialAddr}} {
		_, port, _ := net.SplitHostPort(as.addr)
		p, _ := strconv.Atoi(port)
		if err := testenv.RegisterAPIService(ctx, c, as.group, as.version, "default", as.service, p, ca.PEM); err != nil {
			return err
		}
	}

	for _, name := range []string{apiserver.AggregatedAPIService, trivialVersion + "." + trivialGroup} {
		if err := waitAvailable(ctx, c, name); err != nil {
			return err
		}
	}

	kubeURL := cfg.Host
	if kubeURL[len(kubeURL)-1] == '/' {
		kubeURL = kubeURL[:len(kubeURL)-1]
	}
	ways := []struct {
		name, url string
		conf      *rest.Config
	}{
		{"direct", "https://" + facadeAddr + path, direct},
		{"aggregated", kubeURL + apiserver.AggregatedPrefix + path, user},
		{"trivial aggregated", kubeURL + "/apis/" + trivialGroup + "/" + trivialVersion + path, user},
	}
	results := make([]result, len(ways))
	for i, w := range ways {
		// Every way answers before it is timed: the facade's cache has
		// synced and its decisions are cached.
		if _, err := waitOK(ctx, w.conf, w.url); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		if profile != "" && w.name == "aggregated" {
			go saveProfile("http://"+pprofAddr+"/debug/pprof/profile?seconds=10", profile)
		}
		results[i], err = load(ctx, w.conf, w.url, conns, duration)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		fmt.Printf("%-20s %8.0f requests/s  p50 %6.2f ms  p99 %6.2f ms  (%d requests, %d errors)\n",
			w.name, results[i].rps, ms(results[i].p50), ms(results[i].p99), results[i].n, results[i].errors)
	}
	fmt.Printf("aggbench: nodes=%d conns=%d direct_rps=%.0f direct_p99_ms=%.2f aggregated_rps=%.0f aggregated_p99_ms=%.2f trivial_rps=%.0f trivial_p99_ms=%.2f aggregated_vs_trivial=%.2f\n",
		nodes, conns, results[0].rps, ms(results[0].p99), results[1].rps, ms(results[1].p99), results[2].rps, ms(results[2].p99), results[1].rps/results[2].rps)
	return nil
}

func saveProfile(url, file string) {
	resp, err := http.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func freeAddr() string {
	addr, err := testenv.FreeAddr()
	if err != nil {
		panic(err)
	}
	return addr
}

// createNodes creates n EdgeNodes, 16 at a time.
func createNodes(ctx context.Context, c client.Client, n int) error {
	return testenv.Parallel(n, func(i int) error {
		return c.Create(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%04d", i)},
			Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:7200", Type: "linux", Arch: "amd64"}})
	})
}

// loadUser makes the load's user: a ServiceAccount bound to a role that
// grants the node list at both layers and the trivial backend's path. It
// returns its token (for the direct way) and a client config with it.
func loadUser(ctx context.Context, cfg *rest.Config, c client.Client) (string, *rest.Config, error) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "aggbench"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{edgev1alpha1.GroupVersion.Group}, Resources: []string{"edgenodes"}, Verbs: []string{"list"}},
		{APIGroups: []string{apiserver.AggregatedGroup, trivialGroup}, Resources: []string{"api/node"}, ResourceNames: []string{apiserver.AggregatedName}, Verbs: []string{"get"}},
	}}
	if err := c.Create(ctx, role); err != nil {
		return "", nil, err
	}
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "aggbench"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "aggbench"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "aggbench"}}}); err != nil {
		return "", nil, err
	}
	token, err := testenv.ServiceAccountToken(ctx, cfg, "default", "aggbench")
	if err != nil {
		return "", nil, err
	}
	user := rest.AnonymousClientConfig(cfg)
	user.BearerToken = token
	return token, user, nil
}

func waitAvailable(ctx context.Context, c client.Client, name string) error {
	for ctx.Err() == nil {
		if status, _, _ := testenv.APIServiceAvailable(ctx, c, name); status == "True" {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("APIService %s not Available", name)
}

// httpClient is one HTTP/1.1 connection's client for conf.
func httpClient(conf *rest.Config) (*http.Client, error) {
	tc, err := rest.TLSConfigFor(conf)
	if err != nil {
		return nil, err
	}
	tc.NextProtos = []string{"http/1.1"}
	var rt http.RoundTripper = &http.Transport{TLSClientConfig: tc, MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	if conf.BearerToken != "" {
		rt = transport.NewBearerAuthRoundTripper(conf.BearerToken, rt)
	}
	return &http.Client{Transport: rt, Timeout: 30 * time.Second}, nil
}

// waitOK waits for url to answer a 200 envelope and returns it.
func waitOK(ctx context.Context, conf *rest.Config, url string) ([]byte, error) {
	hc, err := httpClient(conf)
	if err != nil {
		return nil, err
	}
	var last string
	for ctx.Err() == nil {
		resp, err := hc.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			var env struct {
				Status int `json:"status"`
			}
			if resp.StatusCode == http.StatusOK && json.Unmarshal(body, &env) == nil && env.Status == http.StatusOK {
				return body, nil
			}
			last = resp.Status + " " + string(body)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, errors.New("never answered 200: " + last)
}

type result struct {
	rps       float64
	p50, p99  time.Duration
	n, errors int
}

// load runs conns connections against url for d and reports throughput
// and latency of the successful requests.
func load(ctx context.Context, conf *rest.Config, url string, conns int, d time.Duration) (result, error) {
	var mu sync.Mutex
	var lat []time.Duration
	var failed int
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		hc, err := httpClient(conf)
		if err != nil {
			return result{}, err
		}
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for lctx.Err() == nil {
				t := time.Now()
				resp, err := hc.Get(url)
				if err != nil {
					bad++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat, failed = append(lat, mine...), failed+bad
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(lat) == 0 {
		return result{}, errors.New("no request succeeded")
	}
	slices.Sort(lat)
	return result{rps: float64(len(lat)) / elapsed.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], n: len(lat), errors: failed}, nil
}

// serveTrivial serves the trivial backend: discovery enough for its
// APIService to be Available, and a fixed envelope for everything else.
func serveTrivial(ctx context.Context, addr, certFile, keyFile, bodyFile string) {
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trivial backend:", err)
		os.Exit(1)
	}
	resources, _ := json.Marshal(metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: trivialGroup + "/" + trivialVersion,
		APIResources: []metav1.APIResource{{Name: "api/node", Kind: "Envelope", Verbs: []string{"get"}}},
	})
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/apis/"+trivialGroup+"/"+trivialVersion {
			_, _ = w.Write(resources)
			return
		}
		if r.URL.Path == "/apis" {
			http.NotFound(w, r) // no aggregated discovery: kube-apiserver falls back to the group version
			return
		}
		_, _ = w.Write(body)
	})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServeTLS(certFile, keyFile); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "trivial backend:", err)
		os.Exit(1)
	}
}
