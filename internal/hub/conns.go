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

package hub

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"sync"
	"time"
)

// conns knows which node each connection serves, so that a revoked or
// deleted node's connections can be closed at once rather than at its
// next request.
type conns struct {
	mu     sync.Mutex
	byNode map[string]map[net.Conn]struct{}
	nodeOf map[net.Conn]string
}

type connKey struct{}

func newConns() *conns {
	return &conns{byNode: map[string]map[net.Conn]struct{}{}, nodeOf: map[net.Conn]string{}}
}

// context keeps the connection in its requests' contexts.
func (c *conns) context(ctx context.Context, conn net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

// note ties the connection of a request to the node it authenticated as.
func (c *conns) note(ctx context.Context, node string) {
	conn, ok := ctx.Value(connKey{}).(net.Conn)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.nodeOf[conn]; known {
		return
	}
	c.nodeOf[conn] = node
	if c.byNode[node] == nil {
		c.byNode[node] = map[net.Conn]struct{}{}
	}
	c.byNode[node][conn] = struct{}{}
}

// verified says whether the connection of a request already served a
// node with cert, and cert has not expired by now: its chain was verified
// then, and a connection keeps its certificate.
func (c *conns) verified(ctx context.Context, cert *x509.Certificate, now time.Time) bool {
	conn, ok := ctx.Value(connKey{}).(net.Conn)
	if !ok || now.After(cert.NotAfter) || now.Before(cert.NotBefore) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, known := c.nodeOf[conn]
	return known
}

// state forgets a connection once it is closed.
func (c *conns) state(conn net.Conn, s http.ConnState) {
	if s != http.StateClosed && s != http.StateHijacked {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	node, ok := c.nodeOf[conn]
	if !ok {
		return
	}
	delete(c.nodeOf, conn)
	delete(c.byNode[node], conn)
	if len(c.byNode[node]) == 0 {
		delete(c.byNode, node)
	}
}

// close closes node's connections and says how many there were.
func (c *conns) close(node string) int {
	c.mu.Lock()
	open := make([]net.Conn, 0, len(c.byNode[node]))
	for conn := range c.byNode[node] {
		open = append(open, conn)
	}
	c.mu.Unlock()
	for _, conn := range open {
		_ = conn.Close()
	}
	return len(open)
}
