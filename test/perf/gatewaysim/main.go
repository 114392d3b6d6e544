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

// Command gatewaysim (make gateway-sim) replays a heartbeat trace of a
// fleet through internal/hub/heartbeat's gateway and counts the API writes it
// makes (transitions only) against what Lease renewals write today (one
// per node per renew interval), for each fleet size. The trace: every node
// beats every --interval from a random phase; it is cut off by outages
// (Poisson, --outages-per-day, lengths exponential around --outage), and
// --flappers of the nodes are cut off far more often (every --flap-every
// on average, for --flap around). A line per size:
// gateway: nodes= hours= lease_writes_per_s= gateway_writes_per_s= reduction= detect_p50_s= detect_max_s=
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/hub/heartbeat"
)

type outage struct{ start, end time.Duration }

func main() {
	sizes := flag.String("sizes", "1000,5000,10000,100000", "Fleet sizes, comma-separated.")
	hours := flag.Float64("hours", 6, "Simulated hours.")
	interval := flag.Duration("interval", 10*time.Second, "Heartbeat (today: Lease renew) interval.")
	grace := flag.Duration("grace", 40*time.Second, "Grace before a silent node is offline (--node-grace-period).")
	perDay := flag.Float64("outages-per-day", 1, "Outages per node per day.")
	mean := flag.Duration("outage", 5*time.Minute, "Mean outage length.")
	flappers := flag.Float64("flappers", 0.01, "Share of nodes whose link flaps.")
	flapEvery := flag.Duration("flap-every", 10*time.Minute, "Mean time between a flapper's outages.")
	flapLen := flag.Duration("flap", time.Minute, "Mean length of a flapper's outage.")
	seed := flag.Uint64("seed", 1, "Seed of the trace.")
	flag.Parse()
	for s := range strings.SplitSeq(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "gateway-sim: size %q is not a node count\n", s)
			os.Exit(2)
		}
		horizon := time.Duration(*hours * float64(time.Hour))
		r := rand.New(rand.NewPCG(*seed, uint64(n)))
		writes, detect := simulate(r, n, horizon, *interval, *grace, *perDay, *mean, *flappers, *flapEvery, *flapLen)
		lease := float64(n) / interval.Seconds()
		gw := float64(writes) / (horizon - *interval).Seconds()
		slices.Sort(detect)
		p50, worst := 0.0, 0.0
		if len(detect) > 0 {
			p50, worst = detect[len(detect)/2].Seconds(), detect[len(detect)-1].Seconds()
		}
		fmt.Printf("gateway: nodes=%d hours=%g lease_writes_per_s=%.1f gateway_writes_per_s=%.3f reduction=%.0f detect_p50_s=%.1f detect_max_s=%.1f\n",
			n, *hours, lease, gw, lease/max(gw, 1e-9), p50, worst)
	}
}

// simulate replays the trace second by second and returns the gateway's
// writes after the fleet's first interval and, for each outage it saw, the time from the outage's start to
// the node turning offline.
func simulate(r *rand.Rand, n int, horizon, interval, grace time.Duration, perDay float64, mean time.Duration,
	flappers float64, flapEvery, flapLen time.Duration) (int, []time.Duration) {
	// Outages of every node, in order, over the horizon.
	cuts := make([][]outage, n)
	for i := range cuts {
		every, length := time.Duration(float64(24*time.Hour)/perDay), mean
		if r.Float64() < flappers {
			every, length = flapEvery, flapLen
		}
		for t := time.Duration(r.ExpFloat64() * float64(every)); t < horizon; t += time.Duration(r.ExpFloat64() * float64(every)) {
			end := t + time.Duration(r.ExpFloat64()*float64(length))
			cuts[i] = append(cuts[i], outage{t, end})
			t = end
		}
	}
	// Nodes by the second of the interval they beat in.
	slots := int(interval / time.Second)
	bySlot := make([][]int, slots)
	for i := range n {
		s := r.IntN(slots)
		bySlot[s] = append(bySlot[s], i)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	next := make([]int, n) // each node's next outage
	t0 := time.Unix(0, 0)
	g := heartbeat.NewGateway(grace)
	writes := 0
	var detect []time.Duration
	lastCutStart := map[string]time.Duration{}
	// Every node's first heartbeat is a write too, once, when the fleet
	// starts: the steady rate is counted after it.
	warmup := interval
	for sec := time.Duration(0); sec < horizon; sec += time.Second {
		for _, i := range bySlot[int(sec/time.Second)%slots] {
			for next[i] < len(cuts[i]) && cuts[i][next[i]].end <= sec {
				next[i]++
			}
			if next[i] < len(cuts[i]) && cuts[i][next[i]].start <= sec {
				lastCutStart[names[i]] = cuts[i][next[i]].start
				continue // cut off: no heartbeat
			}
			if g.Beat(names[i], t0.Add(sec)) && sec >= warmup {
				writes++
			}
		}
		for _, node := range g.Expire(t0.Add(sec)) {
			if sec >= warmup {
				writes++
			}
			if start, ok := lastCutStart[node]; ok {
				detect = append(detect, sec-start)
			}
		}
	}
	return writes, detect
}
