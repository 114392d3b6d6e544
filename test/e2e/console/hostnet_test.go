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
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// holdingProxy serves the facade through a proxy that holds each request
// of the contract until release: the page's requests stay in flight for as
// long as a spec wants them to.
type holdingProxy struct {
	URL string
	// held counts the requests that came, abandoned those the browser
	// gave up before release, answered those passed on after it.
	held, abandoned, answered atomic.Int32
	gate                      chan struct{}
	release                   func()
}

func newHoldingProxy() *holdingProxy {
	GinkgoHelper()
	target, err := url.Parse(sys.Base)
	Expect(err).NotTo(HaveOccurred())
	p := &holdingProxy{gate: make(chan struct{})}
	var once sync.Once
	p.release = func() { once.Do(func() { close(p.gate) }) }
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v1/") {
			rp.ServeHTTP(w, r)
			return
		}
		p.held.Add(1)
		select {
		case <-p.gate:
		case <-r.Context().Done():
			// The browser closed the connection: it gave the request up.
			p.abandoned.Add(1)
			return
		}
		rp.ServeHTTP(w, r)
		p.answered.Add(1)
	}))
	p.URL = srv.URL
	Expect(bnet.reach(srv.URL)).To(Succeed())
	DeferCleanup(func() {
		p.release()
		// The page leaves the proxy before the proxy goes (see kubeProxy).
		c, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		Expect(chromedp.Do(c, chromedp.Navigate("about:blank"))).To(Succeed())
		srv.Close()
	})
	return p
}

// hostInterface adds a bridge, up, with an address of the benchmarking
// range (198.18.0.0/15, a /32 of this process's own) to the host's network
// namespace, as an engine adds one for a network; the returned func
// deletes it, and a cleanup does if the spec fails first. Chromium in the
// host's namespace sees both as a change of the network. Nothing is sent
// to the address: it is an address of the host's own.
func hostInterface() (remove func()) {
	GinkgoHelper()
	pid := os.Getpid()
	name := fmt.Sprintf("epconsole%d", pid%100000)
	addr := fmt.Sprintf("198.18.%d.%d/32", pid>>8&0xff, pid&0xff)
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	Expect(ip("link", "add", name, "type", "bridge")).To(Succeed())
	var once sync.Once
	remove = func() {
		GinkgoHelper()
		once.Do(func() { Expect(ip("link", "del", name)).To(Succeed()) })
	}
	DeferCleanup(remove)
	Expect(ip("link", "set", name, "up")).To(Succeed())
	Expect(ip("addr", "add", addr, "dev", name)).To(Succeed())
	return remove
}

var _ = Describe("The console while the host's network changes", func() {
	It("keeps its requests to the facade through a bridge and an address added and removed on the host", func() {
		p := newHoldingProxy()
		Expect(chromedp.Do(bounded(), chromedp.Navigate(p.URL+"/console/#/nodes"))).To(Succeed())
		// Chromium opens at most 6 connections to a server; the page's
		// requests beyond them wait in its socket pool for one. On a
		// change of the network Chromium fails exactly those, and the
		// connections being made, with net::ERR_NETWORK_CHANGED: the
		// requests on a connection already go on. So the page asks for
		// more than 6 at once, and the proxy holds the 6 it gets.
		const asked = 10
		eval[bool](fmt.Sprintf(`window.outcomes = Array(%d).fill('pending');
			window.outcomes.forEach((_, i) => fetch('/api/v1/node?pageSize=-1', {cache: 'no-store'})
				.then((r) => { window.outcomes[i] = 'HTTP ' + r.status; }, (e) => { window.outcomes[i] = String(e); }));
			true`, asked))
		Eventually(p.held.Load).Should(BeNumerically("==", 6), "6 connections held, the other requests waiting for one")
		failed := func() []string {
			var out []string
			for _, o := range eval[[]string](`window.outcomes`) {
				if o != "pending" {
					out = append(out, o)
				}
			}
			return out
		}

		By("a bridge with an address, added on the host and removed, while the requests wait")
		// Chromium learns of a change by netlink within moments; each
		// change is given a few seconds to show.
		remove := hostInterface()
		Consistently(failed).WithTimeout(3*time.Second).WithPolling(200*time.Millisecond).Should(BeEmpty(),
			"no request failed after the bridge was added")
		remove()
		Consistently(failed).WithTimeout(3*time.Second).WithPolling(200*time.Millisecond).Should(BeEmpty(),
			"no request failed after the bridge was removed")

		By("every request answered once the proxy lets them through, and the page drawn")
		p.release()
		Eventually(func() []string { return eval[[]string](`window.outcomes`) }).Should(And(HaveLen(asked), HaveEach("HTTP 200")))
		Expect(chromedp.Do(bounded(), waitDrawn())).To(Succeed())
		Expect(text(".live")).NotTo(ContainSubstring("cannot be reached"))
		Expect(p.abandoned.Load()).To(BeZero())
		problems.Lock()
		defer problems.Unlock()
		Expect(problems.list).NotTo(ContainElement(ContainSubstring(p.URL)), "no failed request of the page was logged")
	})
})
