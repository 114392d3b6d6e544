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
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// The Lease a device renews, as through the hub.
const (
	leaseNamespace = "edgeplane-node-lease"
	leasePath      = "/apis/coordination.k8s.io/v1/namespaces/" + leaseNamespace + "/leases/"
	leaseSeconds   = 40
)

// beatMethod is the one gRPC stream of a device: beats up, acks down.
const beatMethod = "/edgeplane.channelcost.Channel/Beat"

// beat is a gRPC heartbeat and its ack.
type beat struct {
	Node      string
	RenewTime time.Time
}

// beater is what the gRPC service needs of its implementation.
type beater interface {
	Beat(grpc.ServerStream) error
}

// channelDesc is written by hand in place of protoc's output.
var channelDesc = grpc.ServiceDesc{
	ServiceName: "edgeplane.channelcost.Channel",
	HandlerType: (*beater)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Beat",
		Handler:       func(srv any, s grpc.ServerStream) error { return srv.(beater).Beat(s) },
		ServerStreams: true,
		ClientStreams: true,
	}},
	Metadata: "channelcost",
}

// jsonCodec carries the beats as JSON, so no generated protobuf is needed.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return "json" }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// isServe tells whether the process is the server: the parent starts it
// with --serve first.
func isServe(args []string) bool {
	return len(args) > 0 && strings.HasPrefix(args[0], "--serve")
}

// serve is the server process: it prints "listening <addr>" and serves
// until its stdin, held by the parent, closes.
func serve(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	way := fs.String("serve", "", "http or grpc")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	dir := fs.String("dir", "", "directory of "+caFile+", "+certFile+" and "+keyFile)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := serveWay(*way, *addr, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "channelcost server:", err)
		return 1
	}
	return 0
}

func serveWay(way, addr, dir string) error {
	if err := raiseFDLimit(); err != nil {
		return err
	}
	conf, err := serverTLS(dir)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", l.Addr())
	// Even a SIGKILLed parent closes our stdin: no orphan server.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	s := &store{renew: map[string]time.Time{}}
	switch way {
	case "http":
		return serveHTTP(l, conf, s)
	case "grpc":
		return serveGRPC(l, conf, s)
	}
	return fmt.Errorf("--serve=%q: want http or grpc", way)
}

// store keeps each node's last heartbeat in memory, as the hub does.
type store struct {
	mu    sync.Mutex
	renew map[string]time.Time
}

// beat records a heartbeat at the server's clock, as the hub does.
func (s *store) beat(node string) time.Time {
	now := time.Now()
	s.mu.Lock()
	s.renew[node] = now
	s.mu.Unlock()
	return now
}

// lease is the Lease of a node renewed at at, as the hub answers it.
func lease(node string, at time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(at)
	dur := int32(leaseSeconds)
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: leaseNamespace, ResourceVersion: strconv.FormatInt(at.UnixNano(), 10)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &dur, RenewTime: &renew},
	}
}

func serveHTTP(l net.Listener, conf *tls.Config, s *store) error {
	srv := &http.Server{
		Handler:           leaseHandler{s},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
		TLSConfig:         conf,
	}
	return srv.ServeTLS(l, "", "")
}

// leaseHandler takes a device's Lease renewal.
type leaseHandler struct{ s *store }

func (h leaseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	node, ok := strings.CutPrefix(r.URL.Path, leasePath)
	if r.Method != http.MethodPut || !ok {
		http.NotFound(w, r)
		return
	}
	cn := r.TLS.PeerCertificates[0].Subject.CommonName
	if node != cn {
		http.Error(w, "a node may renew only its own Lease", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	in := &coordinationv1.Lease{}
	if err == nil {
		err = json.Unmarshal(body, in)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if in.Name != cn {
		http.Error(w, "a node may renew only its own Lease", http.StatusForbidden)
		return
	}
	out, err := json.Marshal(lease(cn, h.s.beat(cn)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func serveGRPC(l net.Listener, conf *tls.Config, s *store) error {
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(conf)),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 20 * time.Second}),
	)
	srv.RegisterService(&channelDesc, beatServer{s})
	return srv.Serve(l)
}

// beatServer answers each beat on a device's stream with an ack.
type beatServer struct{ s *store }

func (b beatServer) Beat(stream grpc.ServerStream) error {
	cn, err := peerNode(stream.Context())
	if err != nil {
		return err
	}
	for {
		in := &beat{}
		if err := stream.RecvMsg(in); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if in.Node != cn {
			return status.Errorf(codes.PermissionDenied, "node %s may beat only for itself, not %s", cn, in.Node)
		}
		if err := stream.SendMsg(&beat{Node: cn, RenewTime: b.s.beat(cn)}); err != nil {
			return err
		}
	}
}

// peerNode is the node of a stream: its client certificate's CN.
func peerNode(ctx context.Context) (string, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", status.Error(codes.Unauthenticated, "no peer")
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		return "", status.Error(codes.Unauthenticated, "no client certificate")
	}
	return info.State.PeerCertificates[0].Subject.CommonName, nil
}
