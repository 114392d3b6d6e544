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

// Package leaks fails test packages whose goroutines outlive their tests,
// with go.uber.org/goleak and the few goroutines that outlive a stopped
// component by design.
package leaks

import (
	"testing"

	"go.uber.org/goleak"
)

// Allowed are the goroutines that outlive a stopped component by design,
// not by a leak: a client transport's idle connections (client-go shares
// transports between clients of one configuration, and they close when
// the server does) and klog's flush daemon.
func Allowed() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2clientConnReadLoop).run"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run"),
	}
}

// VerifyTestMain runs a package's tests, from its TestMain, and fails the
// package when a goroutine outlives them.
func VerifyTestMain(m *testing.M) {
	goleak.VerifyTestMain(m, Allowed()...)
}
