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

package edgeservice

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func version(gen int64) *edgev1alpha1.EdgeService {
	s := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{UID: "svc", Name: "svc", Generation: gen}}
	s.Spec.Image.Ref = edgev1alpha1.ImageRef(fmt.Sprintf("app@%d#linux", gen))
	s.Spec.Nodes = []string{"n"}
	return s
}

func recordFor(s *edgev1alpha1.EdgeService, annotated int64) *edgev1alpha1.DeployRecord {
	return &edgev1alpha1.DeployRecord{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{edgev1alpha1.LabelServiceUID: string(s.UID)},
			Annotations: map[string]string{edgev1alpha1.AnnotationGeneration: strconv.FormatInt(annotated, 10)},
		},
		Spec: edgev1alpha1.DeployRecordSpec{DeploySpec: s.Spec.DeploySpec, Nodes: []edgev1alpha1.RecordNode{{NodeName: "n"}}},
	}
}

func generations(cs []observedConfig) []int64 {
	out := []int64{}
	for _, c := range cs {
		out = append(out, c.generation)
	}
	return out
}

func TestConfigHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(h *configHistory)
		want []int64
	}{{
		name: "keeps every version once, in order",
		run: func(h *configHistory) {
			for _, g := range []int64{1, 2, 2, 3, 1} {
				h.addVersion(version(g))
			}
		},
		want: []int64{1, 2, 3},
	}, {
		name: "a record of a version it holds trims up to it",
		run: func(h *configHistory) {
			for g := int64(1); g <= 4; g++ {
				h.addVersion(version(g))
			}
			h.forgetRecorded(recordFor(version(2), 2))
		},
		want: []int64{3, 4},
	}, {
		name: "a record whose annotation names another version trims nothing",
		run: func(h *configHistory) {
			for g := int64(1); g <= 4; g++ {
				h.addVersion(version(g))
			}
			h.forgetRecorded(recordFor(version(2), 4))
			h.forgetRecorded(recordFor(version(2), math.MaxInt64))
		},
		want: []int64{1, 2, 3, 4},
	}, {
		name: "a late delivery of a recorded version is not kept again",
		run: func(h *configHistory) {
			h.addVersion(version(3))
			h.markRecorded("svc", 3)
			h.addVersion(version(2))
		},
		want: []int64{},
	}, {
		name: "forgetting past the newest observed version stops there",
		run: func(h *configHistory) {
			h.addVersion(version(1))
			h.markRecorded("svc", math.MaxInt64)
			h.addVersion(version(2))
		},
		want: []int64{2},
	}, {
		name: "at most maxPendingVersions are kept, the newest",
		run: func(h *configHistory) {
			for g := int64(1); g <= maxPendingVersions+5; g++ {
				h.addVersion(version(g))
			}
			h.markRecorded("svc", maxPendingVersions+2)
		},
		want: []int64{maxPendingVersions + 3, maxPendingVersions + 4, maxPendingVersions + 5},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newConfigHistory()
			tc.run(h)
			if got := generations(h.pending("svc", 0)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("pending = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConfigHash(t *testing.T) {
	svc := version(1)
	rec := recordFor(svc, 1)
	rec.Spec.Image.PullPolicy = edgev1alpha1.PullIfNotPresent
	if serviceHash(svc.Spec) != recordHash(rec) {
		t.Fatal("a record made from a spec must hash as the spec, with the pull policy resolved")
	}
	limited := svc.DeepCopy()
	limited.Spec.RevisionHistoryLimit = new(int32(3))
	if serviceHash(limited.Spec) != serviceHash(svc.Spec) {
		t.Fatal("revisionHistoryLimit is not part of the configuration")
	}
	moved := svc.DeepCopy()
	moved.Spec.Nodes = []string{"m"}
	if serviceHash(moved.Spec) == serviceHash(svc.Spec) {
		t.Fatal("the node list of a static service is part of the configuration")
	}
}
