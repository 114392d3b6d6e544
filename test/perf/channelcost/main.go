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
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// config is one measurement's size and pace.
type config struct {
	nodes       int
	interval    time.Duration
	window      time.Duration
	connectRate float64
}

// main measures (make channel-cost) what one device heartbeat costs the
// server of each design of the device channel: HTTP/2 Lease renewals, as
// devices renew through the edge hub, and beats on a gRPC bidirectional
// stream per device. The server runs in a child process so that its CPU
// (/proc/<pid>/stat) and RSS are its own. One line per way:
//
//	channel: way= nodes= beats= server_cpu_ms_per_beat= server_cpu_ms_per_node_s= server_rss_mib= server_kib_per_node= client_cpu_ms_per_beat= connect_s= errors=
func main() {
	if isServe(os.Args[1:]) {
		os.Exit(serve(os.Args[1:]))
	}
	os.Exit(cli(os.Args[1:]))
}

func cli(args []string) int {
	c, ways, err := parseFlags(args)
	if err != nil {
		return 2
	}
	if err := raiseFDLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "channelcost: raising the open-file limit:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := 0
	for _, way := range ways {
		r, err := measure(ctx, c, way)
		if err != nil {
			fmt.Fprintf(os.Stderr, "channelcost: %s: %v\n", way, err)
			return 1
		}
		fmt.Println(r)
		if r.retries > 0 {
			fmt.Fprintf(os.Stderr, "channelcost: %s: %d first beats retried while connecting (in connect_s, not in errors)\n", way, r.retries)
		}
		if r.errors > 0 {
			fmt.Fprintf(os.Stderr, "channelcost: %s: %d failed beats: not a valid figure\n", way, r.errors)
			code = 1
		}
	}
	return code
}

func parseFlags(args []string) (config, []string, error) {
	fs := flag.NewFlagSet("channelcost", flag.ContinueOnError)
	var c config
	fs.IntVar(&c.nodes, "nodes", 1000, "simulated devices, each on its own TLS connection")
	way := fs.String("way", "both", "http, grpc, or both (one after the other)")
	fs.DurationVar(&c.interval, "interval", 10*time.Second, "each device beats once per interval")
	fs.DurationVar(&c.window, "window", 60*time.Second, "server CPU is measured over this window, once every device beats")
	fs.Float64Var(&c.connectRate, "connect-rate", 200, "devices dialing per second, so the connection storm is not the figure")
	if err := fs.Parse(args); err != nil {
		return c, nil, err
	}
	ways := map[string][]string{"http": {"http"}, "grpc": {"grpc"}, "both": {"http", "grpc"}}[*way]
	var err error
	switch {
	case ways == nil:
		err = fmt.Errorf("--way=%q: want http, grpc or both", *way)
	case c.nodes < 1 || c.interval <= 0 || c.window <= 0 || c.connectRate <= 0:
		err = errors.New("--nodes, --interval, --window and --connect-rate must be positive")
	}
	if err != nil {
		fmt.Fprintln(fs.Output(), err)
	}
	return c, ways, err
}

// result is one way's figures.
type result struct {
	way             string
	nodes           int
	window          time.Duration
	beats, errors   int64
	serverCPU       time.Duration
	clientCPU       time.Duration
	rssKiB, idleKiB int64
	connect         time.Duration
	retries         int64 // first beats tried again
}

func (r result) String() string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	perBeat := func(d time.Duration) float64 {
		if r.beats == 0 {
			return math.NaN()
		}
		return ms(d) / float64(r.beats)
	}
	return fmt.Sprintf("channel: way=%s nodes=%d beats=%d server_cpu_ms_per_beat=%.3f server_cpu_ms_per_node_s=%.4f server_rss_mib=%.0f server_kib_per_node=%.1f client_cpu_ms_per_beat=%.3f connect_s=%.1f errors=%d",
		r.way, r.nodes, r.beats, perBeat(r.serverCPU),
		ms(r.serverCPU)/float64(r.nodes)/r.window.Seconds(),
		float64(r.rssKiB)/1024, float64(r.rssKiB-r.idleKiB)/float64(r.nodes),
		perBeat(r.clientCPU), r.connect.Seconds(), r.errors)
}

// measure runs a server of the way and c.nodes devices against it, and
// measures the window once every device has beaten and one interval more
// has passed (the connection storm's garbage is not the figure).
func measure(ctx context.Context, c config, way string) (result, error) {
	r := result{way: way, nodes: c.nodes, window: c.window}
	a, err := newAuthority()
	if err != nil {
		return r, err
	}
	dir, err := os.MkdirTemp("", "channelcost-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	if err := a.writeServerFiles(dir); err != nil {
		return r, err
	}
	srv, err := startServer(ctx, way, dir)
	if err != nil {
		return r, err
	}
	defer srv.stop()
	if r.idleKiB, err = rssKiB(srv.pid); err != nil {
		return r, err
	}
	devices := make([]device, c.nodes)
	for i := range devices {
		if devices[i], err = newDevice(a, way, fmt.Sprintf("node-%05d", i), srv.addr); err != nil {
			closeAll(devices)
			return r, err
		}
	}
	defer closeAll(devices)

	var n counters
	first := make(chan error, c.nodes)
	dctx, stopDevices := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Devices stop before they close and before the server goes.
	defer func() { stopDevices(); wg.Wait() }()
	s := schedule{start: time.Now(), nodes: c.nodes, interval: c.interval, rate: c.connectRate}
	for i, d := range devices {
		wg.Go(func() { run(dctx, d, i, s, &n, first) })
	}
	for range c.nodes {
		if err := <-first; err != nil {
			return r, fmt.Errorf("a device's first beat: %w", err)
		}
	}
	r.connect = time.Since(s.start)
	r.retries = n.retries.Load()
	if !sleepUntil(ctx, time.Now().Add(c.interval)) {
		return r, ctx.Err()
	}
	w, err := window(ctx, c.window, srv.pid, &n)
	if err != nil {
		return r, err
	}
	r.beats, r.errors, r.serverCPU, r.clientCPU, r.rssKiB = w.beats, w.errors, w.serverCPU, w.clientCPU, w.rssKiB
	return r, nil
}

// window is what a measurement window saw.
type windowed struct {
	beats, errors        int64
	serverCPU, clientCPU time.Duration
	rssKiB               int64
}

func window(ctx context.Context, d time.Duration, pid string, n *counters) (windowed, error) {
	var w windowed
	s0, err1 := cpuTime(pid)
	c0, err2 := cpuTime("self")
	b0, e0 := n.beats.Load(), n.errors.Load()
	if err := errors.Join(err1, err2); err != nil {
		return w, err
	}
	if !sleepUntil(ctx, time.Now().Add(d)) {
		return w, ctx.Err()
	}
	s1, err1 := cpuTime(pid)
	c1, err2 := cpuTime("self")
	w.beats, w.errors = n.beats.Load()-b0, n.errors.Load()-e0
	rss, err3 := rssKiB(pid)
	if err := errors.Join(err1, err2, err3); err != nil {
		return w, err
	}
	w.serverCPU, w.clientCPU, w.rssKiB = s1-s0, c1-c0, rss
	return w, nil
}

func closeAll(devices []device) {
	for _, d := range devices {
		if d != nil {
			d.close()
		}
	}
}

// server is the child process serving one way.
type server struct {
	cmd   *exec.Cmd
	stdin io.Closer
	pid   string
	addr  string
}

// startServer starts this program as the server of way, and waits for
// its address.
func startServer(ctx context.Context, way, dir string) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "--serve="+way, "--addr=127.0.0.1:0", "--dir="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, pid: strconv.Itoa(cmd.Process.Pid)}
	// A server that never says where it listens is killed, which ends the read.
	t := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	t.Stop()
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		s.stop()
		return nil, fmt.Errorf("the %s server did not start (%q): %v", way, line, err)
	}
	s.addr = addr
	return s, nil
}

// stop kills the server and reaps it.
func (s *server) stop() {
	_ = s.stdin.Close()
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}
