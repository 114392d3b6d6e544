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
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// devicesPerBalancer is how many devices one balancer process carries. It
// holds two descriptors per device, and a process here may hold 20,000
// when the run cannot raise the hard limit (no CAP_SYS_RESOURCE): more
// devices are spread over several processes sharing one port.
const devicesPerBalancer = 8000

// balancerProcs is how many balancer processes a fleet of nodes needs: 0
// when one in this process does. apart asks for one at least, so that
// it can be given a CPU priority of its own.
func balancerProcs(nodes int, apart bool) int {
	n := (nodes + devicesPerBalancer - 1) / devicesPerBalancer
	if n <= 1 && !apart {
		return 0
	}
	return max(n, 1)
}

// deprioritize gives the processes the CPU priority nice (1 to 19): the
// simulated devices and the balancer, which in a fleet run on the
// devices' own CPUs and a load balancer, then take only what the control
// plane leaves.
func deprioritize(nice int, pids map[string]int) {
	for name, pid := range pids {
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, pid, nice); err != nil {
			fmt.Fprintf(os.Stderr, "scale: nice %d of %s: %v\n", nice, name, err)
		}
	}
}

// balancers starts n processes of this binary that share one loopback
// port (SO_REUSEPORT, the kernel spreading new connections over them),
// each balancing round-robin over the targets as the in-process balancer
// does. The sockets are opened here and handed down, so that they listen
// before the processes run; pids gets the processes as balancer-a, -b...
func balancers(ctx context.Context, dir, self string, n int, pids map[string]int) func(targets []string) (string, func(), error) {
	return func(targets []string) (string, func(), error) {
		lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
				return err
			}
			return serr
		}}
		addr := "127.0.0.1:0"
		var cmds []*exec.Cmd
		stop := func() {
			for _, cmd := range cmds {
				procs.Stop(cmd)
			}
		}
		for i := range n {
			l, err := lc.Listen(ctx, "tcp", addr)
			if err != nil {
				stop()
				return "", nil, err
			}
			addr = l.Addr().String()
			f, err := l.(*net.TCPListener).File()
			_ = l.Close()
			if err != nil {
				stop()
				return "", nil, err
			}
			name := "balancer-" + string(rune('a'+i))
			cmd, err := procs.StartWithFiles(ctx, dir, name, []*os.File{f}, self, "--balance", strings.Join(targets, ","))
			_ = f.Close()
			if err != nil {
				stop()
				return "", nil, err
			}
			cmds = append(cmds, cmd)
			pids[name] = cmd.Process.Pid
		}
		return addr, stop, nil
	}
}

// serveBalancer balances the socket handed down as descriptor 3 over
// targets until interrupted.
func serveBalancer(targets string) {
	raiseFileLimit(2*devicesPerBalancer + 1024)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := net.FileListener(os.NewFile(3, "balancer socket"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "balancer:", err)
		os.Exit(1)
	}
	p := testenv.ServeBalancer(l, strings.Split(targets, ",")...)
	<-ctx.Done()
	p.Close()
}
