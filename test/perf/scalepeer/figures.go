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
	"fmt"
	"slices"
	"time"

	"github.com/edgeplane/edgeplane/test/framework/apiprofile"
	"github.com/edgeplane/edgeplane/test/framework/figures"
)

// figuresPage is the pairs' figures as docs/figures/scale-peer-NODES.md:
// each pair's time, kube-apiserver CPU and writes per instance on both
// sides and their ratios, then the ratios' medians.
func figuresPage(nodes, pairs int, cbor bool, within time.Duration, stamp figures.Stamp, compared [][2]result) figures.Page {
	t := figures.Table{Header: []string{"pair", "every instance running: edgeplane, Kubernetes, ratio",
		"kube-apiserver CPU per instance: edgeplane, Kubernetes, ratio", "writes per instance: edgeplane, Kubernetes, ratio"}}
	var times, cpus, writes []float64
	for k, p := range compared {
		ep, peer := p[0], p[1]
		times, cpus, writes = append(times, ep.successS/peer.successS), append(cpus, ep.cpuMsPerInstance/peer.cpuMsPerInstance),
			append(writes, ep.writesPerInstance/peer.writesPerInstance)
		t.Rows = append(t.Rows, []string{fmt.Sprint(k + 1),
			fmt.Sprintf("%.1f s, %s, %.2f", ep.successS, peerTime(peer), times[k]),
			fmt.Sprintf("%.2f ms, %.2f ms, %.2f", ep.cpuMsPerInstance, peer.cpuMsPerInstance, cpus[k]),
			fmt.Sprintf("%.2f, %.2f, %.2f", ep.writesPerInstance, peer.writesPerInstance, writes[k])})
	}
	if len(compared) > 1 {
		t.Rows = append(t.Rows, []string{"median ratio", fmt.Sprintf("%.2f", sortedMedian(times)), fmt.Sprintf("%.2f", sortedMedian(cpus)), fmt.Sprintf("%.2f", sortedMedian(writes))})
	}
	cmd := fmt.Sprintf("make scale-peer NODES=%d PAIRS=%d", nodes, pairs)
	var also string
	if cbor {
		cmd += " CBOR=1"
		also += " Both sides ran with kube-apiserver's alpha CBORServingAndStorage gate: custom resources stored in etcd as CBOR; " +
			"every client still speaks JSON (controller-runtime's clients register no CBOR serializer)."
	}
	if within > 0 {
		cmd += " PEER_WITHIN=" + within.String()
		also += fmt.Sprintf(" The peer's run was stopped %v after its first create where it had not converged: its time is then projected at the rate it reached, "+
			"and its CPU and writes are per instance running by then.", within)
	}
	return figures.Page{
		Title:   fmt.Sprintf("edgeplane beside plain Kubernetes, %d nodes", nodes),
		Command: cmd,
		Stamp:   stamp,
		Intro: fmt.Sprintf("%d nodes, %d services or Deployments of 2 instances, edgeplane's side through the edge hub without the facade's readers, "+
			"then plain Kubernetes on the same kube-apiserver and etcd (docs/benchmarks.md, \"make scale-peer\", says how each is set up). "+
			"Ratios are edgeplane's figure over the peer's: below 1, edgeplane took less. Writes exclude Leases (`apiserver_request_total`)."+also, nodes, 5*nodes),
		Sections: append([]string{t.String()}, stagesSection(compared)...),
	}
}

// stagesSection is kube-apiserver's CPU during each side's convergence
// split by stage, a row per pair and side, as their apiserver_stages:
// lines give it; none when no side has one.
func stagesSection(compared [][2]result) []string {
	t := figures.Table{Header: []string{"pair", "system", "cpu_s"}}
	for _, st := range apiprofile.Stages {
		t.Header = append(t.Header, st+"_pct")
	}
	for k, p := range compared {
		for _, r := range p {
			if r.stages == "" {
				continue
			}
			kv := map[string]string{}
			_, figs, _ := figures.ParseLine(r.stages)
			for _, f := range figs {
				kv[f.Key] = f.Value
			}
			row := []string{fmt.Sprint(k + 1), kv["system"], kv["cpu_s"]}
			for _, st := range apiprofile.Stages {
				row = append(row, kv[st+"_pct"])
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return []string{"kube-apiserver's CPU from the first create until every instance ran, in % by the stage of the work " +
		"(CPU profiles 30 s at a time; a sample counts for the innermost stage its stack names, the collector's wherever it is; " +
		"test/framework/apiprofile):\n\n" + t.String()}
}

// sortedMedian is the median of rs, in any order.
func sortedMedian(rs []float64) float64 {
	s := slices.Clone(rs)
	slices.Sort(s)
	return median(s)
}

// peerTime is the peer's time to every instance, or where it was stopped
// and the time its rate projects.
func peerTime(peer result) string {
	if peer.ceilingS == 0 {
		return fmt.Sprintf("%.1f s", peer.successS)
	}
	return fmt.Sprintf("%.1f s projected (stopped at %.0f s with %d of %d instances running)", peer.successS, peer.ceilingS, peer.running, peer.instances)
}
