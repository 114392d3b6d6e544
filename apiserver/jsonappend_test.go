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

package apiserver

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// containers is a page of Containers written the way a containerPage
// writes its items.
type containers pageOf[container]

func (p *containers) appendJSON(b []byte) []byte {
	return appendPage(b, p.List == nil, len(p.List), p.Total, p.PageNum, p.PageSize, func(b []byte, i int) []byte { return p.List[i].appendJSON(b) })
}

// sameAsEncodingJSON checks that a page written by hand is byte for byte
// what encoding/json writes, alone and inside the envelope.
func sameAsEncodingJSON(t *testing.T, p *containers) {
	t.Helper()
	want, err := json.Marshal(pageOf[container](*p))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.appendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("appendJSON:\n got %s\nwant %s", got, want)
	}
	var env bytes.Buffer
	if err := json.NewEncoder(&env).Encode(envelope{Status: http.StatusOK, Message: "success", Data: pageOf[container](*p)}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	writeOK(rec, p)
	if !bytes.Equal(rec.Body.Bytes(), env.Bytes()) {
		t.Fatalf("writeOK:\n got %s\nwant %s", rec.Body.Bytes(), env.Bytes())
	}
}

func containerWith(s string, f float64, n int64) container {
	started := metav1.NewTime(time.Unix(n%(1<<40), n%1e9).In(time.FixedZone("east", 3600)))
	return container{
		ID: s, TaskID: s + "t", Name: "n" + s, Status: &s, Uptime: n, StartedTime: &started, TaskCreatedTime: -n, DeployStatus: s,
		RestartCnt: int32(n), DeployNum: int32(n >> 32), CPUUsage: cpuUsage{Total: f, Cores: []float64{f, -f, f / 3}},
		MemoryLimit: n, MemoryUsage: n / 2, MemoryMaxUsage: n / 3, SizeUsage: n / 5, SizeLimit: n / 7,
		ServiceID: s, ServiceName: s, NodeID: s, Address: s, NodeName: s, NodeArch: s, ImageID: s, ImageName: s, ImageVersion: s, ImageOS: s, ImageArch: s,
		ImagePull: &imagePull{Image: s, Queued: n%2 == 0, BytesDone: n / 11, BytesTotal: n}, Revision: n / 13,
	}
}

func TestContainerPageJSON(t *testing.T) {
	msg := "exit 1: <boom> & \"quoted\"\n"
	zero := metav1.Time{}
	for name, p := range map[string]*containers{
		"empty list":   {List: []container{}, Total: 0, PageNum: 1, PageSize: 10},
		"nil list":     {PageNum: 1, PageSize: -1},
		"zero values":  {List: []container{{}}, Total: 1, PageNum: 1, PageSize: 10},
		"every field":  {List: []container{containerWith("edge-01", 0.25, 1<<40), {FailedMessage: &msg, CreatedTime: &zero, CPUUsage: cpuUsage{Cores: []float64{}}}}, Total: 2, PageNum: 1, PageSize: 10},
		"escapes":      {List: []container{containerWith("a\"b\\c\x00\x1f\t\b\f\r<>&\u2028\u2029\xff\xfeé漢", 1e-7, -1)}, Total: 1, PageNum: 1, PageSize: 1},
		"float ranges": {List: []container{containerWith("x", 1e21, math.MaxInt64), containerWith("y", 123456789.125, math.MinInt64), containerWith("z", 5e-324, 0)}, Total: 3, PageNum: 2, PageSize: 3},
	} {
		t.Run(name, func(t *testing.T) { sameAsEncodingJSON(t, p) })
	}
}

func FuzzContainerJSON(f *testing.F) {
	f.Add("edge-linux-01", 0.5, int64(42))
	f.Add("<\u2028\xff\"\\\x01", 1e-9, int64(-7))
	f.Add("", 1e300, int64(0))
	f.Fuzz(func(t *testing.T, s string, fl float64, n int64) {
		if math.IsNaN(fl) || math.IsInf(fl, 0) {
			return // a report cannot carry them: JSON has no such numbers
		}
		sameAsEncodingJSON(t, &containers{List: []container{containerWith(s, fl, n)}, Total: int(n), PageNum: 1, PageSize: 10})
	})
}

// TestPlain8 checks the eight-byte test against the byte table: every
// byte value at every position, beside plain bytes and beside a byte that
// is not (a borrow from one byte must not hide or invent another).
func TestPlain8(t *testing.T) {
	isPlain := func(c byte) bool { return c < 0x80 && plain[c] }
	for _, fill := range []byte{'a', 0x7f, ' ', 0x00, 0x80, '"'} {
		for pos := range 8 {
			for v := range 256 {
				w := bytes.Repeat([]byte{fill}, 8)
				w[pos] = byte(v)
				want := true
				for _, c := range w {
					want = want && isPlain(c)
				}
				if got := plain8(string(w)); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", w, got, want)
				}
			}
		}
	}
}

// TestAppendFloatTenths holds the tenths shortcut to encoding/json,
// around zero, at its bounds and past them.
func TestAppendFloatTenths(t *testing.T) {
	check := func(f float64) {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("appendFloat(%v) = %s, want %s", f, got, want)
		}
	}
	for k := -20000; k <= 20000; k++ {
		check(float64(k) / 10)
		check(float64(k) / 100)
	}
	for _, f := range []float64{math.Copysign(0, -1), 1e12 - 0.1, 1e12, 1e12 + 0.5, 999999999999.9, 7e14 + 0.125, 0.1 + 0.2, 100.05, -0.05, 5e-324} {
		check(f)
		check(-f)
	}
}

// TestNodePageJSON holds node pages, full and basic, to encoding/json.
func TestNodePageJSON(t *testing.T) {
	s := &Server{opts: Options{Location: time.FixedZone("east", 8*3600)}}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	boot := metav1.NewTime(now.Add(-90*time.Minute - 250*time.Millisecond))
	nodeWith := func(name string, status edgev1alpha1.NodeState) *edgev1alpha1.EdgeNode {
		n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + types.UID(name), CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:" + name, TLS: true, Type: "linux", Arch: "arm64"}}
		n.Status.Status, n.Status.BootTime = status, &boot
		n.Status.ContainerTotal, n.Status.ContainerRunning, n.Status.ContainerManagedTotal, n.Status.ContainerManagedRunning = 7, 5, 3, -1
		n.Status.AppTotal, n.Status.AppRunning = 1<<30, 0
		return n
	}
	down := nodeWith("engine-down", edgev1alpha1.NodeOnline)
	down.Status.Conditions = []metav1.Condition{{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionFalse}}
	up := nodeWith("engine-up", edgev1alpha1.NodeOnline)
	up.Status.Conditions = []metav1.Condition{{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionTrue}}
	nodes := []*edgev1alpha1.EdgeNode{nodeWith("edge-1", edgev1alpha1.NodeOnline), nodeWith("a\"<&>\u2028\xff", ""), {}, down, up}
	for _, basic := range []bool{false, true} {
		p := &nodePage{page: pageOf[*edgev1alpha1.EdgeNode]{List: nodes, Total: 9, PageNum: 2, PageSize: 5}, basic: basic, now: now, s: s}
		ref := pageOf[node]{List: []node{}, Total: 9, PageNum: 2, PageSize: 5}
		for _, n := range nodes {
			ref.List = append(ref.List, s.node(n, basic, now))
		}
		want, err := json.Marshal(ref)
		if err != nil {
			t.Fatal(err)
		}
		got := p.appendJSON(nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("basic=%v:\n got %s\nwant %s", basic, got, want)
		}
		// The runtime field: null, false and true as the conditions say,
		// and absent from basic items.
		for _, part := range []string{`"name":"edge-1"`, `"runtimeReady":null`, `"runtimeReady":false`, `"runtimeReady":true`} {
			if bytes.Contains(got, []byte(part)) == basic && part != `"name":"edge-1"` {
				t.Errorf("basic=%v: %s in %s", basic, part, got)
			}
		}
	}
}
