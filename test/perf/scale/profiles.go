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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// profileSeconds is how long each CPU profile of the run lasts.
const profileSeconds = 30

// takeProfiles writes CPU profiles of the manager, the agent and the API
// server, taken at once, into dir, then an execution trace of the manager.
// A failed one is reported and skipped.
// profileRegistration takes CPU profiles of kube-apiserver and of every
// process given by name and pprof address (the manager, the devices, the
// hub replicas), at once, over the first profileSeconds of the nodes'
// registration.
func profileRegistration(ctx context.Context, cfg *rest.Config, dir string, pprofs map[string]string) {
	apiClient, err := rest.HTTPClientFor(cfg)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiles of the registration:", err)
		return
	}
	path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", profileSeconds)
	targets := map[string]profileTarget{"kube-apiserver": {apiClient, strings.TrimSuffix(cfg.Host, "/") + path}}
	for name, addr := range pprofs {
		// The devices serve pprof a moment after their process starts.
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = procs.WaitFor(wctx, name+"'s pprof", 100*time.Millisecond, func() (bool, error) {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = c.Close()
			}
			return err == nil, nil
		})
		cancel()
		targets[name] = profileTarget{http.DefaultClient, "http://" + addr + path}
	}
	fetchProfiles(ctx, dir, "-registration", targets)
}

type profileTarget struct {
	client *http.Client
	url    string
}

// fetchProfiles takes the targets' profiles at once into dir, as
// NAME+suffix.pprof; a failed one is reported and skipped.
func fetchProfiles(ctx context.Context, dir, suffix string, targets map[string]profileTarget) {
	var wg sync.WaitGroup
	for name, t := range targets {
		wg.Go(func() {
			out := filepath.Join(dir, name+suffix+".pprof")
			if err := fetchProfile(ctx, t.client, t.url, out); err != nil {
				fmt.Fprintf(os.Stderr, "profile of %s: %v\n", name, err)
				return
			}
			fmt.Printf("CPU profile of %s: %s\n", name, out)
		})
	}
	wg.Wait()
}

// takeProfiles takes CPU profiles of kube-apiserver and of the processes
// in pprofs (name: address) at once, then an execution trace of the
// manager.
func takeProfiles(ctx context.Context, cfg *rest.Config, dir string, pprofs map[string]string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
		return
	}
	apiClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
		return
	}
	path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", profileSeconds)
	targets := map[string]profileTarget{"kube-apiserver": {apiClient, strings.TrimSuffix(cfg.Host, "/") + path}}
	for name, addr := range pprofs {
		targets[name] = profileTarget{http.DefaultClient, "http://" + addr + path}
	}
	fetchProfiles(ctx, dir, "", targets)
	// Then an execution trace of the manager, which splits the facade's
	// time inside it from the time before the Go runtime sees a request.
	out := filepath.Join(dir, "manager.trace")
	if err := fetchProfile(ctx, http.DefaultClient, fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", pprofs["manager"], traceSeconds), out); err != nil {
		fmt.Fprintf(os.Stderr, "trace of the manager: %v\n", err)
		return
	}
	split, err := splitFacade(out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "trace of the manager: %v\n", err)
		return
	}
	fmt.Printf("execution trace of the manager: %s\n%s\n", out, split)
}

func fetchProfile(ctx context.Context, c *http.Client, url, out string) error {
	ctx, cancel := context.WithTimeout(ctx, (profileSeconds+30)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// objectSizes prints the JSON size of one object of each kind the run
// writes, and how much of it is managedFields: every write pays for both.
func objectSizes(ctx context.Context, c client.Client) string {
	var b strings.Builder
	for _, o := range []struct {
		gv                    schema.GroupVersion
		kind, namespace, name string
	}{
		{edgev1alpha1.GroupVersion, "EdgeService", "default", "svc-00000"},
		{edgev1alpha1.GroupVersion, "DeployRecord", "default", "svc-00000-1"},
		{edgev1alpha1.GroupVersion, "EdgeNode", "", "edge-linux-01"},
		{edgev1alpha1.GroupVersion, "NodeAssignment", "", "edge-linux-01"},
		{coordinationv1.SchemeGroupVersion, "Lease", "edgeplane-node-lease", "edge-linux-01"},
	} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gv.WithKind(o.kind))
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: o.name}, u); err != nil {
			fmt.Fprintf(&b, "\n  %-14s %v", o.kind, err)
			continue
		}
		whole, _ := json.Marshal(u.Object)
		entries := u.GetManagedFields()
		managed, _ := json.Marshal(entries)
		// Whose fields the managedFields bytes are: writer, operation, subresource.
		var by []string
		for _, e := range entries {
			one, _ := json.Marshal(e)
			who := e.Manager + " " + string(e.Operation)
			if e.Subresource != "" {
				who += " " + e.Subresource
			}
			by = append(by, fmt.Sprintf("%s %d", who, len(one)))
		}
		fmt.Fprintf(&b, "\n  %-14s %6d  (%d: %s)", o.kind, len(whole), len(managed), strings.Join(by, "; "))
	}
	return b.String()
}
