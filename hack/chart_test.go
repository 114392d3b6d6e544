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

package hack

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// TestHelmChart renders charts/edgeplane with Helm's Go library at the
// default values and at others, applies each for real to an API server
// that has only the chart's CRDs, and fails when the default render and
// config/default disagree about a resource, an RBAC rule or a flag.
func TestHelmChart(t *testing.T) {
	root := testenv.RepoRoot()
	chrt, err := loader.Load(filepath.Join(root, "charts", "edgeplane"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("carries config's CRDs", func(t *testing.T) {
		if len(chrt.CRDObjects()) != 5 {
			t.Errorf("the chart has %d CRDs in crds/, want 5", len(chrt.CRDObjects()))
		}
		for _, crd := range chrt.CRDObjects() {
			want, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", filepath.Base(crd.Filename)))
			if err != nil || !bytes.Equal(crd.File.Data, want) {
				t.Errorf("charts/edgeplane/%s differs from config/crd/bases: run make manifests", crd.Filename)
			}
		}
	})

	// The one value without a default, as config/default has it.
	defaults := renderChart(t, chrt, "edgeplane", "edgeplane-system", map[string]any{"hub": map[string]any{"advertiseURL": placeholderHubURL}})
	t.Run("agrees with config/default", func(t *testing.T) {
		out, err := exec.Command(filepath.Join(assetsDir(t), "kubectl"), "kustomize", filepath.Join(root, "config", "default")).Output()
		if err != nil {
			t.Fatal(err)
		}
		config := map[string]*unstructured.Unstructured{}
		for _, u := range decodeYAML(t, out) {
			if u.GetKind() == "CustomResourceDefinition" || (u.GetKind() == "Namespace" && u.GetName() == "edgeplane-system") {
				continue // the chart's crds/, and the release namespace Helm creates
			}
			config[objectKey(u)] = u
		}
		chart := map[string]*unstructured.Unstructured{}
		for _, u := range defaults {
			chart[objectKey(u)] = u
		}
		if got, want := sortedKeys(chart), sortedKeys(config); !slices.Equal(got, want) {
			t.Fatalf("the chart renders\n  %v\nconfig/default\n  %v", got, want)
		}
		for key, want := range config {
			got := chart[key]
			for _, field := range comparedFields(want.GetKind()) {
				w, g := fieldAt(want.Object, field), fieldAt(got.Object, field)
				if !reflect.DeepEqual(normalize(w), normalize(g)) {
					t.Errorf("%s: %s differs:\n  chart  %v\n  config %v", key, strings.Join(field, "."), g, w)
				}
			}
		}
	})

	t.Run("requires the hub's URL", func(t *testing.T) {
		for url, want := range map[string]string{"": "hub.advertiseURL is required", "hub.example.com:443": "want https://HOST:PORT"} {
			_, err := render(chrt, "edgeplane", "edgeplane-system", map[string]any{"hub": map[string]any{"advertiseURL": url}})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("hub.advertiseURL %q: the render fails with %v, want %q", url, err, want)
			}
		}
	})

	t.Run("gives the hub its own least privilege", func(t *testing.T) {
		checkHubRBAC(t, defaults, "edgeplane", "edgeplane-system", "edgeplane-node-lease")
	})

	t.Run("leaves the finalizer policy to the manager where the cluster does not serve it", func(t *testing.T) {
		objs, err := renderOn(chartutil.DefaultCapabilities, chrt, "edgeplane", "edgeplane-system", map[string]any{"hub": map[string]any{"advertiseURL": "https://hub.example.com:443"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) == 0 {
			t.Fatal("nothing rendered")
		}
		for _, u := range objs {
			if strings.HasPrefix(u.GetKind(), "MutatingAdmissionPolicy") {
				t.Errorf("%s rendered for a cluster that does not serve it", objectKey(u))
			}
		}
	})

	t.Run("leaves the hub out when asked", func(t *testing.T) {
		for _, u := range renderChart(t, chrt, "edgeplane", "edgeplane-system", map[string]any{"hub": map[string]any{"enabled": false}}) {
			if strings.HasPrefix(u.GetName(), "edgeplane-hub") {
				t.Errorf("%s rendered with hub.enabled false", objectKey(u))
			}
		}
	})

	other := map[string]any{
		"replicas":       3,
		"leaderElection": false,
		"leaseNamespace": "edge-leases",
		"apiNamespace":   "legacy",
		"facade": map[string]any{"auth": "none", "audiences": []any{}, "tlsSecretName": "", "timeZone": "Asia/Shanghai",
			"corsAllowedOrigins": []any{"https://console.example.com", "http://localhost:3000"}},
		"metrics":             map[string]any{"secure": false},
		"networkPolicy":       map[string]any{"enabled": false},
		"podDisruptionBudget": map[string]any{"enabled": false},
		"resources":           map[string]any{"limits": map[string]any{"memory": "1Gi"}},
		"extraArgs":           []any{"--concurrency=8"},
		"hub": map[string]any{"replicas": 4, "advertiseURL": "https://hub.plant-a.example:30444", "tlsSANs": []any{"hub.plant-a.internal", "10.0.0.5"},
			"service":   map[string]any{"type": "NodePort", "nodePort": 30444, "annotations": map[string]any{"example.com/exposed": "devices"}},
			"extraArgs": []any{"--hub-cert-validity=72h"}},
	}
	custom := renderChart(t, chrt, "edge2", "edge2-system", other)
	t.Run("renders other values as asked", func(t *testing.T) {
		kinds := map[string]int{}
		var args, hubArgs []string
		for _, u := range custom {
			kinds[u.GetKind()]++
			if u.GetKind() == "Deployment" {
				c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				var these []string
				for _, a := range c[0].(map[string]any)["args"].([]any) {
					these = append(these, a.(string))
				}
				want := float64(3)
				if u.GetLabels()["app.kubernetes.io/component"] == "hub" {
					hubArgs, want = these, 4
				} else {
					args = these
				}
				if r := normalize(fieldAt(u.Object, []string{"spec", "replicas"})); r != want {
					t.Errorf("%s: replicas %v, want %v", u.GetName(), r, want)
				}
			}
		}
		for _, kind := range []string{"NetworkPolicy", "PodDisruptionBudget"} {
			if kinds[kind] != 0 {
				t.Errorf("%d %s rendered though turned off", kinds[kind], kind)
			}
		}
		// No leader election Role; the manager's Roles in the Lease,
		// facade and release (the facade's join tokens) namespaces, the
		// hub's in the Lease and release namespaces.
		if kinds["Role"] != 5 || kinds["RoleBinding"] != 5 {
			t.Errorf("%d Roles and %d RoleBindings, want 5 and 5 (no leader election)", kinds["Role"], kinds["RoleBinding"])
		}
		checkHubRBAC(t, custom, "edge2", "edge2-system", "edge-leases")
		for _, want := range []string{"--metrics-secure=false", "--lease-namespace=edge-leases", "--hub-tls-san=hub.plant-a.internal,10.0.0.5", "--hub-cert-validity=72h",
			"--hub-advertise-url=$(HUB_ADVERTISE_URL)", "--hub-namespace=$(POD_NAMESPACE)"} {
			if !slices.Contains(hubArgs, want) {
				t.Errorf("hub args %v lack %s", hubArgs, want)
			}
		}
		for _, u := range custom {
			switch objectKey(u) {
			case "Deployment edge2-system/edge2-hub":
				if env := fieldAt(u.Object, []string{"spec", "template", "spec", "containers", "0", "env", "0", "value"}); env != "https://hub.plant-a.example:30444" {
					t.Errorf("HUB_ADVERTISE_URL %v, want hub.advertiseURL", env)
				}
			case "Service edge2-system/edge2-hub":
				if typ, port := fieldAt(u.Object, []string{"spec", "type"}), normalize(fieldAt(u.Object, []string{"spec", "ports", "0", "nodePort"})); typ != "NodePort" || port != float64(30444) {
					t.Errorf("the hub's Service is %v on node port %v, want NodePort 30444", typ, port)
				}
				if u.GetAnnotations()["example.com/exposed"] != "devices" {
					t.Errorf("the hub's Service lacks hub.service.annotations: %v", u.GetAnnotations())
				}
			}
		}
		for _, want := range []string{"--auth=none", "--metrics-secure=false", "--lease-namespace=edge-leases", "--api-namespace=legacy", "--time-zone=Asia/Shanghai", "--concurrency=8",
			"--cors-allowed-origins=https://console.example.com,http://localhost:3000"} {
			if !slices.Contains(args, want) {
				t.Errorf("args %v lack %s", args, want)
			}
		}
		for _, unwanted := range []string{"--leader-elect", "--tls-cert-file=/tls/tls.crt", "--api-audiences=edgeplane-facade"} {
			if slices.Contains(args, unwanted) {
				t.Errorf("args %v have %s", args, unwanted)
			}
		}
		// The manager knows every flag the chart gives it and the hub
		// (--version stops it once they have parsed).
		bin := filepath.Join(t.TempDir(), "manager")
		build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
		}
		for _, flags := range [][]string{args, hubArgs} {
			if out, err := exec.Command(bin, append(flags, "--version")...).CombinedOutput(); err != nil {
				t.Errorf("the manager refuses the chart's flags %v: %v\n%s", flags, err, out)
			}
		}
	})

	injected := renderChart(t, chrt, "edgeplane", "edgeplane-system", map[string]any{"aggregation": map[string]any{"certManagerCertificate": "facade-cert"},
		"hub": map[string]any{"advertiseURL": placeholderHubURL}})
	t.Run("leaves the APIService's caBundle to cert-manager when asked", func(t *testing.T) {
		var found bool
		for _, u := range injected {
			switch u.GetKind() {
			case "APIService":
				found = true
				if got := u.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "edgeplane-system/facade-cert" {
					t.Errorf("inject-ca-from %q, want edgeplane-system/facade-cert", got)
				}
			case "Deployment":
				c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				for _, a := range c[0].(map[string]any)["args"].([]any) {
					if strings.HasPrefix(a.(string), "--apiservice") {
						t.Errorf("the manager sets the caBundle too (%s) though cert-manager injects it", a)
					}
				}
			}
		}
		if !found {
			t.Error("no APIService rendered")
		}
	})

	t.Run("is accepted by the API server, both renders", func(t *testing.T) {
		env := &envtest.Environment{BinaryAssetsDirectory: assetsDir(t), Scheme: testenv.Scheme}
		for _, crd := range chrt.CRDObjects() {
			env.CRDInstallOptions.Paths = append(env.CRDInstallOptions.Paths, filepath.Join(root, "charts", "edgeplane", crd.Filename))
		}
		if _, err := testenv.StartEnv(env); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Stop() })
		c, err := client.New(env.Config, client.Options{Scheme: testenv.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, ns := range []string{"edgeplane-system", "edge2-system", "legacy", "edge-leases"} {
			if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
		}
		// Namespaces first, as Helm installs them.
		objs := append(defaults, custom...)
		slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
			return cmp.Compare(b2i(a.GetKind() != "Namespace"), b2i(b.GetKind() != "Namespace"))
		})
		for _, u := range objs {
			if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("helm-test"), client.ForceOwnership); err != nil {
				t.Errorf("applying %s: %v", objectKey(u), err)
			}
		}
	})
}

// placeholderHubURL is config/hub's --hub-advertise-url, which reaches no
// device.
const placeholderHubURL = "https://edgeplane-hub.example.invalid:443"

// renderChart renders the chart's templates as helm install would.
func renderChart(t *testing.T, c *chart.Chart, release, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	out, err := render(c, release, namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// render renders the chart's templates as helm install would on a
// cluster of kube-apiserver's version here, or fails as it would.
func render(c *chart.Chart, release, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	caps := *chartutil.DefaultCapabilities
	caps.APIVersions = append(slices.Clone(caps.APIVersions), "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")
	return renderOn(&caps, c, release, namespace, values)
}

// renderOn renders the chart's templates as helm install would on a
// cluster serving caps.
func renderOn(caps *chartutil.Capabilities, c *chart.Chart, release, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasSuffix(name, ".tpl") {
			continue
		}
		objs, err := testenv.DecodeYAML([]byte(files[name]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// checkHubRBAC holds the hub's ServiceAccount in a render to its own
// roles: cluster-wide, nothing of the services, records and templates the
// manager and the facade handle and no Secret at all, and besides its
// role only system:auth-delegator (the metrics filter's reviews);
// Secrets only in its own and the Lease namespace; no wildcards.
func checkHubRBAC(t *testing.T, objs []*unstructured.Unstructured, release, namespace, leaseNamespace string) {
	t.Helper()
	sa := release + "-hub"
	boundToHub := func(u *unstructured.Unstructured) bool {
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			s := s.(map[string]any)
			if s["kind"] == "ServiceAccount" && s["name"] == sa && s["namespace"] == namespace {
				return true
			}
		}
		return false
	}
	roles := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" || u.GetKind() == "Role" {
			roles[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = u
		}
	}
	var bound []string
	for _, b := range objs {
		if (b.GetKind() != "ClusterRoleBinding" && b.GetKind() != "RoleBinding") || !boundToHub(b) {
			continue
		}
		kind, _, _ := unstructured.NestedString(b.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		if name == "system:auth-delegator" && b.GetKind() == "ClusterRoleBinding" {
			continue
		}
		bound = append(bound, b.GetKind()+" "+b.GetNamespace()+" "+name)
		ns := b.GetNamespace()
		if kind == "ClusterRole" {
			ns = ""
		}
		role, ok := roles[kind+" "+ns+"/"+name]
		if !ok || name != release+"-hub-role" {
			t.Errorf("%s %s binds the hub to %s %s, not its own role", b.GetKind(), b.GetName(), kind, name)
			continue
		}
		if ns != "" && ns != namespace && ns != leaseNamespace {
			t.Errorf("the hub has a Role in namespace %s, neither its own nor the Lease namespace", ns)
		}
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		for _, r := range rules {
			r := r.(map[string]any)
			groups, _, _ := unstructured.NestedStringSlice(r, "apiGroups")
			resources, _, _ := unstructured.NestedStringSlice(r, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(r, "verbs")
			if slices.Contains(groups, "*") || slices.Contains(resources, "*") || slices.Contains(verbs, "*") {
				t.Errorf("%s %s: a wildcard in %v", kind, name, r)
			}
			for _, res := range resources {
				switch {
				case slices.Contains([]string{"edgeservices", "deployrecords", "provisiontemplates"}, strings.Split(res, "/")[0]):
					t.Errorf("%s %s grants the hub %v on %s", kind, name, verbs, res)
				case res == "secrets" && ns == "":
					t.Errorf("ClusterRole %s grants the hub %v on Secrets of every namespace", name, verbs)
				}
			}
		}
	}
	slices.Sort(bound)
	want := []string{"ClusterRoleBinding  " + release + "-hub-role", "RoleBinding " + leaseNamespace + " " + release + "-hub-role", "RoleBinding " + namespace + " " + release + "-hub-role"}
	slices.Sort(want)
	if !slices.Equal(bound, want) {
		t.Errorf("the hub is bound to\n  %v\nwant\n  %v", bound, want)
	}
}

// comparedFields are the fields of a kind on which the chart and config
// must agree; labels, selectors and the image are allowed to differ.
func comparedFields(kind string) [][]string {
	switch kind {
	case "ClusterRole", "Role":
		return [][]string{{"rules"}, {"metadata", "annotations"}}
	case "ClusterRoleBinding", "RoleBinding":
		return [][]string{{"roleRef"}, {"subjects"}}
	case "Deployment":
		return [][]string{
			{"spec", "replicas"}, {"spec", "template", "spec", "serviceAccountName"}, {"spec", "template", "spec", "securityContext"},
			{"spec", "template", "spec", "volumes"}, {"spec", "template", "spec", "containers", "0", "args"},
			{"spec", "template", "spec", "containers", "0", "ports"}, {"spec", "template", "spec", "containers", "0", "resources"},
			{"spec", "template", "spec", "containers", "0", "securityContext"}, {"spec", "template", "spec", "containers", "0", "volumeMounts"},
			{"spec", "template", "spec", "containers", "0", "command"}, {"spec", "template", "spec", "containers", "0", "env"},
			{"spec", "template", "spec", "containers", "0", "livenessProbe"}, {"spec", "template", "spec", "containers", "0", "readinessProbe"},
		}
	case "Service":
		return [][]string{{"spec", "ports"}, {"spec", "publishNotReadyAddresses"}, {"spec", "type"}}
	case "APIService":
		return [][]string{{"spec"}}
	case "PodDisruptionBudget":
		return [][]string{{"spec", "minAvailable"}}
	case "NetworkPolicy":
		return [][]string{{"spec", "policyTypes"}, {"spec", "ingress"}}
	case "Namespace":
		return [][]string{{"metadata", "labels", "pod-security.kubernetes.io/enforce"}}
	case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "FlowSchema":
		return [][]string{{"spec"}}
	}
	return nil
}

// fieldAt is the value at a path of map keys and list indexes; nil when absent.
func fieldAt(v any, path []string) any {
	for _, p := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// normalize makes YAML numbers of either decoder compare equal.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	case int64:
		return float64(v)
	case int:
		return float64(v)
	}
	return v
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func decodeYAML(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	out, err := testenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assetsDir(t *testing.T) string {
	t.Helper()
	dir, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
