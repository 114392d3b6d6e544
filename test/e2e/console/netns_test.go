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

package console_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// browserNet is the network namespace the browser runs in: a loopback of
// its own and nothing else. Chromium aborts its requests in flight with
// net::ERR_NETWORK_CHANGED when the interfaces or addresses it sees
// change, and the engine suites beside this one add and remove bridges and
// veths on the host all the time; in here, nothing changes.
//
// The browser reaches a server of the suite on the host's loopback at the
// same address in its own: a listener the suite opens in the namespace
// forwards each connection to the host's (reach). chromedp talks to the
// browser over a pipe, which no namespace stops.
//
// Nothing is named or mounted: the namespace lives while the suite holds
// it open, its listeners listen or its browser runs, and is gone with the
// last of them, also when the suite is killed.
type browserNet struct {
	// ns is the namespace, open for the suite's life.
	ns *os.File

	mu        sync.Mutex
	closed    bool
	listeners map[string]net.Listener
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
}

// newBrowserNet makes the namespace and brings its loopback up.
func newBrowserNet() (*browserNet, error) {
	type made struct {
		f   *os.File
		err error
	}
	c := make(chan made, 1)
	go func() {
		// The thread that made the namespace is never unlocked: it ends
		// with this goroutine, and no other goroutine runs on it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			c <- made{err: fmt.Errorf("making a network namespace (unshare): %w", err)}
			return
		}
		if err := loopbackUp(); err != nil {
			c <- made{err: err}
			return
		}
		f, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		c <- made{f, err}
	}()
	m := <-c
	if m.err != nil {
		return nil, m.err
	}
	return &browserNet{ns: m.f, listeners: map[string]net.Listener{}, conns: map[net.Conn]struct{}{}}, nil
}

// loopbackUp sets lo up in the calling thread's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("a socket to set lo up: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("setting lo up: %w", err)
	}
	return nil
}

// inside runs f on a thread that has entered the namespace. A socket f
// makes belongs to the namespace for its whole life, whichever thread
// uses it later. The thread itself is thrown away after f.
func (b *browserNet) inside(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Setns(int(b.ns.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering the browser's network namespace: %w", err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// command makes cmd, the browser's, start in the namespace: nsenter (of
// util-linux) enters it and runs the browser in its place, so the
// browser's process is the one chromedp started and ends. As chromedp's
// own default does, the kernel kills the browser when the thread that
// started it (chromedp keeps it for the browser's life) ends with the
// suite's process.
func (b *browserNet) command(cmd *exec.Cmd) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		cmd.Err = fmt.Errorf("nsenter (Debian's util-linux) runs the browser in its network namespace: %w", err)
		return
	}
	cmd.Args = append([]string{nsenter, fmt.Sprintf("--net=/proc/%d/fd/%d", os.Getpid(), b.ns.Fd()), "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = nsenter
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// reach makes the server at rawURL, on the host's loopback, answer at the
// same address in the namespace; a second call for the same address does
// nothing. The forwarding lasts until close.
func (b *browserNet) reach(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	addr := u.Host
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("the browser reaches loopback servers only, not %s", addr)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("the browser's network is closed")
	}
	if _, ok := b.listeners[addr]; ok {
		return nil
	}
	var l net.Listener
	if err := b.inside(func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	}); err != nil {
		return fmt.Errorf("listening on %s in the browser's network namespace: %w", addr, err)
	}
	b.listeners[addr] = l
	b.wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			b.wg.Go(func() { b.forward(in, addr) })
		}
	})
	return nil
}

// forward copies one connection of the browser to the host's addr and
// back. The dial runs on an ordinary thread, in the host's namespace.
func (b *browserNet) forward(in net.Conn, addr string) {
	defer func() { _ = in.Close() }()
	out, err := net.Dial("tcp", addr)
	if err != nil {
		return // the browser sees the refusal as a closed connection
	}
	defer func() { _ = out.Close() }()
	if !b.track(in, out) {
		return
	}
	defer b.untrack(in, out)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.(*net.TCPConn).CloseWrite()
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
}

func (b *browserNet) track(conns ...net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	for _, c := range conns {
		b.conns[c] = struct{}{}
	}
	return true
}

func (b *browserNet) untrack(conns ...net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range conns {
		delete(b.conns, c)
	}
}

// close stops every listener and connection, waits for the forwarding to
// end and lets the namespace go (it goes when the browser has, too).
func (b *browserNet) close() error {
	b.mu.Lock()
	b.closed = true
	for _, l := range b.listeners {
		_ = l.Close()
	}
	for c := range b.conns {
		_ = c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
	return b.ns.Close()
}
