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

package apiprofile

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// cpuProfile is a CPU profile of one sample per stack, each worth its
// milliseconds; a stack is innermost first.
func cpuProfile(stacks map[string][]string, ms map[string]int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	fns := map[string]*profile.Function{}
	for name, stack := range stacks {
		s := &profile.Sample{Value: []int64{1, ms[name] * int64(time.Millisecond)}}
		for _, f := range stack {
			fn := fns[f]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(fns) + 1), Name: f}
				fns[f] = fn
				p.Function = append(p.Function, fn)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func TestSplit(t *testing.T) {
	const handler = "k8s.io/apiserver/pkg/endpoints/handlers.(*patcher).patchResource"
	stacks := map[string][]string{
		// The collector's assist inside a decode is the collector's.
		"assist": {"runtime.scanobject", "runtime.gcDrainN", "runtime.gcAssistAlloc", "runtime.mallocgc", "encoding/json.(*decodeState).object", handler},
		"mark":   {"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"},
		// The innermost stage wins: a JSON decode inside validation is
		// validation's only when validation is inner.
		"decode":     {"runtime.memmove", "encoding/json.(*decodeState).literalStore", "k8s.io/apiextensions-apiserver/pkg/apiserver.(*unstructuredSchemaCoercer).apply", handler},
		"validation": {"k8s.io/kube-openapi/pkg/validation/validate.(*objectValidator).Validate", "k8s.io/apiextensions-apiserver/pkg/registry/customresource.statusStrategy.ValidateUpdate", handler},
		"managed":    {"sigs.k8s.io/structured-merge-diff/v6/typed.(*TypedValue).Merge", "k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager.(*FieldManager).Apply", handler},
		"admission":  {"k8s.io/apiserver/pkg/admission/plugin/policy/mutating.(*dispatcher).Dispatch", handler},
		"encode":     {"encoding/json.(*encodeState).marshal", "k8s.io/apimachinery/pkg/runtime/serializer/json.(*Serializer).Encode"},
		"etcd":       {"go.etcd.io/etcd/client/v3.(*kv).Do", "k8s.io/apiserver/pkg/storage/etcd3.(*store).GuaranteedUpdate"},
		"watch":      {"k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process"},
		"filters":    {"crypto/internal/fips140/nistec.p256Mul", "crypto/x509.(*Certificate).Verify", "k8s.io/apiserver/pkg/authentication/request/x509.(*Authenticator).AuthenticateRequest"},
		"network":    {"internal/runtime/syscall/linux.Syscall6", "syscall.write", "net.(*conn).Write", "crypto/tls.(*Conn).Write"},
		"other":      {"runtime.futex", "runtime.findRunnable", "runtime.schedule"},
	}
	ms := map[string]int64{"assist": 100, "mark": 100, "decode": 100, "validation": 100, "managed": 100, "admission": 50, "encode": 50, "etcd": 100, "watch": 100, "filters": 100, "network": 50, "other": 50}
	got, err := Split(cpuProfile(stacks, ms))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"gc": 0.2, "decode": 0.1, "validation": 0.1, "managed_fields": 0.1, "admission": 0.05, "encode": 0.05, "etcd": 0.1, "watch": 0.1, "filters": 0.1, "network": 0.05, "other": 0.05}
	if got.CPU != time.Second {
		t.Errorf("CPU = %v, want 1s", got.CPU)
	}
	for st, w := range want {
		if d := got.Shares[st] - w; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %.3f, want %.3f", st, got.Shares[st], w)
		}
	}
	line := got.Line("edgeplane")
	wantLine := "apiserver_stages: system=edgeplane cpu_s=1.0 gc_pct=20.0 admission_pct=5.0 managed_fields_pct=10.0 validation_pct=10.0 decode_pct=10.0 encode_pct=5.0 etcd_pct=10.0 watch_pct=10.0 filters_pct=10.0 network_pct=5.0 other_pct=5.0"
	if line != wantLine {
		t.Errorf("line\n%s\nwant\n%s", line, wantLine)
	}
}

func TestSplitRefusesAProfileWithoutCPU(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}}
	if _, err := Split(p); err == nil {
		t.Error("a heap profile was split as CPU")
	}
}

// TestSample merges consecutive profiles until it is stopped.
func TestSample(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" || r.URL.Query().Get("seconds") != "1" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
			return
		}
		served.Add(1)
		var b bytes.Buffer
		_ = cpuProfile(map[string][]string{"w": {"k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process"}}, map[string]int64{"w": 10}).Write(&b)
		_, _ = w.Write(b.Bytes())
	}))
	defer srv.Close()
	stop := make(chan struct{})
	go func() {
		for served.Load() < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		close(stop)
	}()
	p, err := Sample(context.Background(), srv.Client(), srv.URL, time.Second, stop)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Split(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU < 20*time.Millisecond || s.Shares["watch"] != 1 {
		t.Errorf("merged %v with %v watch; want at least two profiles' 20ms, all watch", s.CPU, s.Shares["watch"])
	}
}
