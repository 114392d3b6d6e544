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

package testenv

import (
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Proxy is a TCP proxy on loopback between a client and a server, so that a
// test can cut the client's link (as a WAN outage would) while the server
// goes on serving everyone else, or slow what the server sends down to a
// trickle, or to nothing at all (a poor cellular link, a stalled one).
type Proxy struct {
	l      net.Listener
	target string
	// targets, when set, are several servers (replicas behind one
	// Service): each new connection goes to the next of them in turn that
	// accepts it; next is the turn.
	targets []string
	next    int
	mu      sync.Mutex
	cut     bool
	conns   map[net.Conn]bool
	wg      sync.WaitGroup
	// rate is the bytes per second the server's side may send: 0 without
	// bound, below 0 none; rateChanged wakes the copies waiting on it.
	rate        int64
	rateChanged *sync.Cond
}

// StartProxy forwards a loopback port to target (host:port).
func StartProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serveProxy(l, target), nil
}

func serveProxy(l net.Listener, target string) *Proxy {
	p := &Proxy{l: l, target: target, conns: map[net.Conn]bool{}}
	p.rateChanged = sync.NewCond(&p.mu)
	p.wg.Go(p.serve)
	return p
}

// ServeBalancer is StartBalancer on a listener of the caller's: one of
// several processes sharing a port (SO_REUSEPORT), when a fleet's
// connections are more than one process may hold.
func ServeBalancer(l net.Listener, targets ...string) *Proxy {
	p := serveProxy(l, targets[0])
	p.SetTargets(targets...)
	return p
}

// StartBalancer forwards a loopback port to several targets (host:port),
// as a Service's load balancer spreads connections over its replicas:
// new connections go round-robin to the targets, and one that refuses a
// connection (a replica killed) is passed over for the next.
func StartBalancer(targets ...string) (*Proxy, error) {
	if len(targets) == 0 {
		return nil, errors.New("a balancer needs a target")
	}
	p, err := StartProxy(targets[0])
	if err != nil {
		return nil, err
	}
	p.SetTargets(targets...)
	return p, nil
}

// SetTargets spreads new connections over targets, round-robin, passing
// over those that refuse; open connections stay.
func (p *Proxy) SetTargets(targets ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.targets = append([]string(nil), targets...)
}

// ProxyConfig is cfg reaching its API server through a new Proxy.
func ProxyConfig(cfg *rest.Config) (*rest.Config, *Proxy, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, nil, err
	}
	p, err := StartProxy(u.Host)
	if err != nil {
		return nil, nil, err
	}
	out := rest.CopyConfig(cfg)
	u.Host = p.Addr()
	out.Host = u.String()
	return out, p, nil
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Cut drops every connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.rateChanged.Broadcast()
}

// SetRate bounds what the server sends to bytesPerSecond, on connections
// open and to come: 0 lifts the bound, below 0 sends nothing (a stall).
func (p *Proxy) SetRate(bytesPerSecond int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = bytesPerSecond
	p.rateChanged.Broadcast()
}

// SetTarget sends new connections to target, as a Service's load
// balancer does once the backend it chose is gone; open ones stay. It
// replaces the targets of SetTargets.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target, p.targets = target, nil
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Close stops the proxy and drops every connection.
func (p *Proxy) Close() {
	_ = p.l.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) serve() {
	for {
		in, err := p.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		p.wg.Go(func() { p.forward(in) })
	}
}

// forward copies both ways until either side closes or the link is cut.
func (p *Proxy) forward(in net.Conn) {
	out, err := p.dial()
	if err != nil {
		_ = in.Close()
		return
	}
	if !p.track(in, out) {
		_ = in.Close()
		_ = out.Close()
		return
	}
	defer p.untrack(in, out)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		// Read and Write, not the TCP connections' splice(2): a splice
		// waiting for data holds a pipe (two descriptors) besides the
		// sockets, and a proxy of thousands of idle connections (a fleet's
		// behind a balancer) ran out of descriptors.
		_, _ = io.Copy(struct{ io.Writer }{dst}, struct{ io.Reader }{src})
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(out, in)
	go func() {
		_ = p.throttled(in, out)
		_ = in.Close()
		_ = out.Close()
		done <- struct{}{}
	}()
	<-done
	<-done
}

// dial connects to the target, or to the next of the targets in turn
// that accepts.
func (p *Proxy) dial() (net.Conn, error) {
	p.mu.Lock()
	targets := []string{p.target}
	if n := len(p.targets); n > 0 {
		first := p.next % n
		p.next++
		targets = append(slices.Clone(p.targets[first:]), p.targets[:first]...)
	}
	p.mu.Unlock()
	var errs []error
	for _, t := range targets {
		out, err := net.DialTimeout("tcp", t, 5*time.Second)
		if err == nil {
			return out, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// throttled copies what the server sends, a tenth of a second's worth of
// the rate at a time.
func (p *Proxy) throttled(dst, src net.Conn) error {
	buf := make([]byte, 32<<10)
	for {
		p.mu.Lock()
		for p.rate < 0 && !p.cut {
			p.rateChanged.Wait()
		}
		rate, cut := p.rate, p.cut
		p.mu.Unlock()
		if cut {
			return net.ErrClosed
		}
		chunk := buf
		if rate > 0 {
			chunk = buf[:max(1, min(int64(len(buf)), rate/10))]
		}
		n, err := src.Read(chunk)
		if n > 0 {
			if _, werr := dst.Write(chunk[:n]); werr != nil {
				return werr
			}
			if rate > 0 {
				time.Sleep(time.Duration(int64(n) * int64(time.Second) / rate))
			}
		}
		if err != nil {
			return err
		}
	}
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}
