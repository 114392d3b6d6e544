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

// Package apiprofile splits kube-apiserver's CPU by the stage of the work
// a request goes through (decoding, validation, managed fields, storage,
// the watch, the collector...), from CPU profiles taken of it over a
// whole run, so that two systems on the same server can be compared
// stage by stage.
package apiprofile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/rest"
)

// Stages in the order they are reported; a sample counts for the first
// rule, from its innermost frame out, that names one of its frames.
var Stages = []string{"gc", "admission", "managed_fields", "validation", "decode", "encode", "etcd", "watch", "filters", "network", "other"}

// gcFrames put a sample in gc wherever they are in its stack: the
// collector's background workers and its assists inside requests.
var gcFrames = []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.markroot", "runtime.gcStart"}

// rules name, per stage, what a function's full name contains.
var rules = []struct {
	stage string
	parts []string
}{
	{"admission", []string{"k8s.io/apiserver/pkg/admission", "k8s.io/kubernetes/plugin/pkg/admission"}},
	{"managed_fields", []string{"sigs.k8s.io/structured-merge-diff/", "k8s.io/apimachinery/pkg/util/managedfields", "/handlers/fieldmanager"}},
	{"validation", []string{"k8s.io/kube-openapi/pkg/validation/", "apiextensions-apiserver/pkg/apiserver/validation", "apiextensions-apiserver/pkg/apiserver/schema/cel",
		"github.com/google/cel-go/", "k8s.io/apiserver/pkg/cel/", "/pkg/apis/core/validation", "/pkg/apis/apps/validation", "k8s.io/apimachinery/pkg/api/validation",
		"k8s.io/apimachinery/pkg/util/validation", "ValidateUpdate", "ValidateCreate", ".Validate"}},
	{"decode", []string{"Unmarshal", "decodeState", ").Decode", "schemaCoercingDecoder", "unstructuredSchemaCoercer", "FromUnstructured", "json.checkValid"}},
	{"encode", []string{"encodeState", ").Encode", "Marshal", "doEncode", "ToUnstructured"}},
	{"etcd", []string{"go.etcd.io/etcd/", "google.golang.org/grpc"}},
	{"watch", []string{"k8s.io/apiserver/pkg/storage/cacher", "etcd3.(*watchChan)", "etcd3.(*watcher)"}},
	{"filters", []string{"k8s.io/apiserver/pkg/endpoints/filters", "k8s.io/apiserver/pkg/server/filters", "k8s.io/apiserver/pkg/authentication", "k8s.io/apiserver/pkg/authorization",
		"k8s.io/apiserver/pkg/audit", "k8s.io/apiserver/plugin/pkg/audit", "k8s.io/apiserver/pkg/util/flowcontrol", "go.opentelemetry.io/", "crypto/x509", "crypto/ecdsa", "crypto/rsa"}},
	{"network", []string{"crypto/tls", "crypto/internal/fips140/aes", "syscall.", "runtime/syscall/", "internal/poll.", "net.", "net/http.", "golang.org/x/net/http2"}},
}

// Shares is a profile's CPU and each stage's share of it, 0 to 1.
type Shares struct {
	CPU    time.Duration
	Shares map[string]float64
}

// Split shares the CPU samples of p out by stage.
func Split(p *profile.Profile) (Shares, error) {
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return Shares{}, fmt.Errorf("not a CPU profile: no cpu/nanoseconds sample type")
	}
	byStage := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[cpu]
		total += v
		byStage[stage(s)] += v
	}
	out := Shares{CPU: time.Duration(total), Shares: map[string]float64{}}
	for _, st := range Stages {
		if total > 0 {
			out.Shares[st] = float64(byStage[st]) / float64(total)
		}
	}
	return out, nil
}

// stage is the stage a sample's CPU counts for.
func stage(s *profile.Sample) string {
	var frames []string // innermost first
	for _, loc := range s.Location {
		// Inlined functions come first in a location's lines.
		for _, l := range loc.Line {
			if l.Function != nil {
				frames = append(frames, l.Function.Name)
			}
		}
	}
	for _, f := range frames {
		for _, g := range gcFrames {
			if strings.HasPrefix(f, g) {
				return "gc"
			}
		}
	}
	for _, f := range frames {
		for _, r := range rules {
			for _, part := range r.parts {
				if strings.Contains(f, part) {
					return r.stage
				}
			}
		}
	}
	return "other"
}

// Line is the shares as one line of figures: "apiserver_stages:
// system=<system> cpu_s=... gc_pct=... ...".
func (s Shares) Line(system string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiserver_stages: system=%s cpu_s=%.1f", system, s.CPU.Seconds())
	for _, st := range Stages {
		fmt.Fprintf(&b, " %s_pct=%.1f", st, 100*s.Shares[st])
	}
	return b.String()
}

// Sample takes CPU profiles of the server at base (its /debug/pprof),
// each lasting each, one after the other until stop is closed, and
// merges them: a profile of the whole window, which ends up to each
// after stop.
func Sample(ctx context.Context, hc *http.Client, base string, each time.Duration, stop <-chan struct{}) (*profile.Profile, error) {
	var parts []*profile.Profile
	for {
		p, err := fetch(ctx, hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(base, "/"), int(each.Seconds())), each)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
		select {
		case <-stop:
			return profile.Merge(parts)
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
	}
}

func fetch(ctx context.Context, hc *http.Client, url string, each time.Duration) (*profile.Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, each+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	return profile.Parse(resp.Body)
}

// Server samples the kube-apiserver of cfg from now until stop is closed,
// 30 s at a time, and returns its stages as a line for system.
func Server(ctx context.Context, cfg *rest.Config, system string, stop <-chan struct{}) (string, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", err
	}
	p, err := Sample(ctx, hc, cfg.Host, 30*time.Second, stop)
	if err != nil {
		return "", err
	}
	s, err := Split(p)
	if err != nil {
		return "", err
	}
	return s.Line(system), nil
}
