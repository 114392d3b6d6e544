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
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// device is one simulated edge device on its own TLS connection.
type device interface {
	// beat sends one heartbeat and waits for its answer, for at most timeout.
	beat(ctx context.Context, timeout time.Duration) error
	close()
}

// newDevice is device node of the given way, with its own certificate.
func newDevice(a *authority, way, node, addr string) (device, error) {
	conf, err := a.clientTLS(node)
	if err != nil {
		return nil, err
	}
	if way == "http" {
		return newHTTPDevice(conf, node, addr), nil
	}
	return newGRPCDevice(conf, node, addr)
}

// httpDevice renews its Lease with a PUT, as the agent does through the hub.
type httpDevice struct {
	url    string
	tr     *http.Transport
	client *http.Client
	kept   *coordinationv1.Lease
}

func newHTTPDevice(conf *tls.Config, node, addr string) *httpDevice {
	// One transport per device: its own connection, never shared.
	tr := &http.Transport{TLSClientConfig: conf, ForceAttemptHTTP2: true}
	return &httpDevice{
		url:    "https://" + addr + leasePath + node,
		tr:     tr,
		client: &http.Client{Transport: tr},
		kept:   lease(node, time.Now()),
	}
}

func (d *httpDevice) beat(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Like the agent: the Lease last answered, with a new renewTime.
	renew := metav1.NewMicroTime(time.Now())
	d.kept.Spec.RenewTime = &renew
	body, err := json.Marshal(d.kept)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, d.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Read to the end: a body closed early resets the HTTP/2 stream.
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(out))
	}
	l := &coordinationv1.Lease{}
	if err := json.Unmarshal(out, l); err != nil {
		return err
	}
	d.kept = l
	return nil
}

func (d *httpDevice) close() { d.tr.CloseIdleConnections() }

// grpcDevice beats on one long-lived bidirectional stream.
type grpcDevice struct {
	node   string
	conn   *grpc.ClientConn
	stream grpc.ClientStream
	cancel context.CancelFunc
}

func newGRPCDevice(conf *tls.Config, node, addr string) (*grpcDevice, error) {
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(credentials.NewTLS(conf)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(jsonCodec{}.Name())),
	)
	if err != nil {
		return nil, err
	}
	return &grpcDevice{node: node, conn: conn}, nil
}

var errTimeout = errors.New("no ack in time")

func (d *grpcDevice) beat(ctx context.Context, timeout time.Duration) error {
	if d.stream == nil {
		sctx, cancel := context.WithCancel(ctx)
		s, err := d.conn.NewStream(sctx, &channelDesc.Streams[0], beatMethod)
		if err != nil {
			cancel()
			return err
		}
		d.stream, d.cancel = s, cancel
	}
	// A lost ack must fail the beat, not hang the device: cancel the stream.
	t := time.AfterFunc(timeout, d.cancel)
	err := d.stream.SendMsg(&beat{Node: d.node, RenewTime: time.Now()})
	ack := &beat{}
	if err == nil {
		err = d.stream.RecvMsg(ack)
	}
	if !t.Stop() && err == nil {
		err = errTimeout
	}
	if err == nil && ack.Node != d.node {
		err = fmt.Errorf("ack for %s, not %s", ack.Node, d.node)
	}
	if err != nil {
		// The next beat opens a new stream.
		d.cancel()
		d.stream = nil
	}
	return err
}

func (d *grpcDevice) close() {
	if d.cancel != nil {
		d.cancel()
	}
	_ = d.conn.Close()
}

// counters are the beats of all devices, the failed ones, and the retried
// first beats.
type counters struct {
	beats, errors, retries atomic.Int64
}

// schedule is when devices beat: device i dials at i/rate (the connect
// rate limit) and then beats in its slot, i/nodes of the interval, so the
// beats are spread evenly over every interval.
type schedule struct {
	start    time.Time
	nodes    int
	interval time.Duration
	rate     float64
}

func (s schedule) dialAt(i int) time.Time {
	return s.start.Add(time.Duration(float64(i) / s.rate * float64(time.Second)))
}

// nextBeat is device i's next slot at least half an interval after now.
func (s schedule) nextBeat(i int, now time.Time) time.Time {
	next := s.start.Add(time.Duration(i) * s.interval / time.Duration(s.nodes))
	if d := now.Add(s.interval / 2).Sub(next); d > 0 {
		next = next.Add((d/s.interval + 1) * s.interval)
	}
	return next
}

// run beats device i until ctx ends; its first beat's outcome goes to first.
func run(ctx context.Context, d device, i int, s schedule, n *counters, first chan<- error) {
	if !sleepUntil(ctx, s.dialAt(i)) {
		first <- ctx.Err()
		return
	}
	err := firstBeat(ctx, d, s.interval, n)
	first <- err
	if err != nil {
		return
	}
	n.beats.Add(1)
	for {
		if !sleepUntil(ctx, s.nextBeat(i, time.Now())) {
			return
		}
		err := d.beat(ctx, s.interval)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			n.errors.Add(1)
		default:
			n.beats.Add(1)
		}
	}
}

// firstTries is how often a device tries its first beat, 2 s apart: as an
// agent retries, a connection refused in the storm on a loaded machine
// only delays it.
const firstTries = 5

func firstBeat(ctx context.Context, d device, timeout time.Duration, n *counters) error {
	err := d.beat(ctx, timeout)
	for try := 1; err != nil && try < firstTries; try++ {
		if !sleepUntil(ctx, time.Now().Add(2*time.Second)) {
			return ctx.Err()
		}
		n.retries.Add(1)
		err = d.beat(ctx, timeout)
	}
	return err
}

// sleepUntil waits for t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
