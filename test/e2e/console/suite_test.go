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

// Package console_test drives the web console in Debian's Chromium,
// headless, against the manager and its facade on envtest with simulated
// agents: what a person sees and does, checked against the contract.
package console_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/e2e"
)

var (
	ctx     context.Context
	sys     *e2e.System
	browser context.Context
	// bnet is the browser's network namespace.
	bnet *browserNet
	// shots is where each view's screenshot goes.
	shots string
	// silence stops the agent of the node the suite silences.
	silence context.CancelFunc
	// engineDown makes the engine of engineNode stop answering its agent.
	engineDown atomic.Bool
	// problems are the JavaScript exceptions, console errors and dialogs
	// of the whole run: there must be none.
	problems struct {
		sync.Mutex
		list []string
		// expected are the messages a spec causes on purpose: the
		// browser logs each refused request (401, 403) it asks for.
		expected []*regexp.Regexp
	}
)

const silentNode = "edge-linux-04"

// engineNode is the node whose engine the suite stops.
const engineNode = "edge-sylixos-03"

// stoppable is a simulated engine the suite can stop: while engineDown is
// set, it answers no call, as an engine whose API service stopped.
type stoppable struct{ agent.Runtime }

var errEngineDown = errors.New("the engine does not answer (stopped by the test)")

func (r stoppable) Ping(ctx context.Context) error {
	if engineDown.Load() {
		return errEngineDown
	}
	return r.Runtime.Ping(ctx)
}

func (r stoppable) List(ctx context.Context) ([]agent.Container, error) {
	if engineDown.Load() {
		return nil, errEngineDown
	}
	return r.Runtime.List(ctx)
}

func TestConsole(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	testenv.RunSpecs(t, "Console in a browser")
}

var _ = BeforeSuite(func() {
	if os.Getenv("EDGEPLANE_SKIP_BROWSER") == "1" {
		Skip("EDGEPLANE_SKIP_BROWSER=1: the console's browser suite is skipped")
	}
	out, err := exec.Command("../../../hack/chromium.sh").Output()
	Expect(err).NotTo(HaveOccurred(), "hack/chromium.sh finds or installs Chromium")
	chromium := strings.TrimSpace(string(out))

	o := controllers.DefaultOptions()
	o.NodeGracePeriod, o.RescheduleGrace = 3*time.Second, 30*time.Second
	// kube-apiserver aggregates APIs, so that a spec can reach the
	// console through it.
	ctx, sys = e2e.StartSuite(o, func(env *envtest.Environment) error {
		_, err := testenv.ConfigureAggregation(env, GinkgoT().TempDir())
		return err
	})

	opts := agent.DefaultOptions()
	opts.Log = logf.Log.WithName("agent")
	opts.RenewInterval, opts.MetricsInterval, opts.Tick = 500*time.Millisecond, time.Second, 100*time.Millisecond
	opts.RuntimeProbeInterval, opts.Clock = time.Second, clock.RealClock{}
	simOpts := sim.DefaultOptions()
	simOpts.StartDelay, simOpts.FailImages = 300*time.Millisecond, regexp.MustCompile("^broken")
	simOpts.StallPulls = regexp.MustCompile("^big@") // a pull that waits, to show
	opts.NewRuntime = func(n agent.Node, i int) (agent.Runtime, error) {
		rt := sim.New(n, simOpts, i)
		if n.Name == engineNode {
			return stoppable{rt}, nil
		}
		return rt, nil
	}
	opts.Nodes = []agent.Node{
		{Name: "edge-linux-01", Type: "linux", Arch: "amd64", Address: "10.0.0.1:7200"},
		{Name: "edge-linux-02", Type: "linux", Arch: "arm64", Address: "10.0.0.2:7200"},
		{Name: "edge-sylixos-03", Type: "sylixos", Arch: "arm64", Address: "10.0.0.3:7200"},
	}
	go func() { _ = agent.Run(ctx, sys.Cfg, opts) }()
	silent := opts
	silent.Nodes = []agent.Node{{Name: silentNode, Type: "linux", Arch: "amd64", Address: "10.0.0.4:7200"}}
	var sctx context.Context
	sctx, silence = context.WithCancel(ctx)
	go func() { _ = agent.Run(sctx, sys.Cfg, silent) }()

	shots = os.Getenv("EDGEPLANE_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join("..", "..", "..", "dist", "console")
	}
	Expect(os.MkdirAll(shots, 0o755)).To(Succeed())

	// The browser runs in a network namespace of its own, where the
	// host's interfaces never change under it; it reaches the facade
	// there at the facade's address.
	bnet, err = newBrowserNet()
	Expect(err).NotTo(HaveOccurred(), "the browser's network namespace (the suite runs as root)")
	DeferCleanup(func() { Expect(bnet.close()).To(Succeed()) })
	Expect(bnet.reach(sys.Base)).To(Succeed())
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.ModifyCmdFunc(bnet.command),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(GinkgoT().TempDir()),
		// Chromium's own scratch directories (org.chromium.Chromium.*)
		// outlive a browser that is killed; keep them in the suite's.
		chromedp.Env("TMPDIR="+GinkgoT().TempDir()),
		// The suite's second facade serves TLS with a certificate of a CA
		// made for the run.
		chromedp.IgnoreCertErrors,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))...)
	DeferCleanup(cancelAlloc)
	var cancelBrowser context.CancelFunc
	browser, cancelBrowser = chromedp.NewContext(alloc)
	DeferCleanup(cancelBrowser)
	Expect(chromedp.Do(browser, chromedp.Navigate("about:blank"))).To(Succeed())
	messages := chromedp.Console(browser)
	dialogs := chromedp.Events(browser, page.JavascriptDialogOpening)
	record := func(p string) {
		problems.Lock()
		problems.list = append(problems.list, p)
		problems.Unlock()
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				record(fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
			}
		}
	}()
	go func() {
		for d, err := range dialogs {
			if err != nil {
				return
			}
			record("dialog: " + d.Message)
			_, _ = chromedp.Call(browser, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
})

// A failed spec's report holds what the browser showed and the problems
// logged so far: a failure in CI can be read from its output alone.
var _ = AfterEach(func() {
	if browser == nil || !CurrentSpecReport().Failed() {
		return
	}
	c, cancel := context.WithTimeout(browser, 5*time.Second)
	defer cancel()
	shown, err := chromedp.Run(c, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
	if err != nil {
		shown = "unreadable: " + err.Error()
	}
	problems.Lock()
	logged := strings.Join(problems.list, "\n")
	problems.Unlock()
	AddReportEntry("the browser at the failure", shown+"\n--- logged:\n"+logged)
})

// No exception, console error or dialog happened during the whole run.
var _ = AfterSuite(func() {
	if browser == nil {
		return
	}
	problems.Lock()
	defer problems.Unlock()
	var unexpected []string
	for _, p := range problems.list {
		if !slices.ContainsFunc(problems.expected, func(re *regexp.Regexp) bool { return re.MatchString(p) }) {
			unexpected = append(unexpected, p)
		}
	}
	Expect(unexpected).To(BeEmpty(), "JavaScript exceptions, console errors or dialogs")
})

// consoleURL is the console's address with a view's hash.
func consoleURL(hash string) string { return sys.Base + "/console/" + hash }

// open navigates to a view and waits for its live part to be drawn.
func open(hash string) {
	GinkgoHelper()
	Expect(chromedp.Do(bounded(), chromedp.Navigate(consoleURL(hash)), waitDrawn())).To(Succeed())
}

// bounded is the browser's context for one step: a step that waits for an
// element that never comes fails instead of hanging the suite.
func bounded() context.Context {
	c, cancel := context.WithTimeout(browser, 20*time.Second)
	DeferCleanup(cancel)
	return c
}

// waitDrawn waits until the live part has been drawn from the facade.
func waitDrawn() chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(`.live[aria-busy="false"]`))
}

// text reads the visible text of the first element matching sel. The page
// redraws on its own every few seconds: a read that found the element just
// before a redraw replaced it is tried again on the new one.
func text(sel string) string {
	GinkgoHelper()
	var s string
	var err error
	for range 5 {
		s, err = chromedp.Run(bounded(), chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
		if !replaced(err) {
			break
		}
	}
	Expect(err).NotTo(HaveOccurred(), sel)
	return s
}

// click clicks the first element matching sel in the live part, again on
// the new element when a redraw replaced it first, then waits for the live
// part to be drawn.
func click(sel string) {
	GinkgoHelper()
	var err error
	for range 5 {
		if _, err = chromedp.Run(bounded(), chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); !replaced(err) {
			break
		}
	}
	Expect(err).NotTo(HaveOccurred(), sel)
	Expect(chromedp.Do(bounded(), waitDrawn())).To(Succeed())
}

// replaced says the browser no longer knows a node it found: a redraw
// removed it between the query and the read.
func replaced(err error) bool {
	var e *cdproto.Error
	if !errors.As(err, &e) || e.Code != -32000 {
		return false
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "node with given id") || strings.Contains(m, "could not compute box model")
}

// eval evaluates an expression in the page; the tests read the DOM with it.
func eval[T any](expr string) T {
	GinkgoHelper()
	v, err := chromedp.Run(bounded(), chromedp.Evaluate[T](expr))
	Expect(err).NotTo(HaveOccurred(), expr)
	return v
}

// submit fills the fields of form (name, value, name, value…) and submits
// it as a person does: the focus goes into the form first, and a view's
// refresh every few seconds swaps out no live part that holds the focus,
// so the form cannot be replaced by an empty one between the values and
// the click.
func submit(form string, fields ...string) {
	GinkgoHelper()
	Eventually(func() bool {
		return eval[bool](fmt.Sprintf(`(() => { const c = document.querySelector(%q)?.querySelector('input:not([type=hidden]), select, textarea'); c?.focus(); return !!c && document.activeElement === c; })()`, form))
	}).Should(BeTrue(), "the focus is in "+form)
	var fill []chromedp.Action[chromedp.Void]
	for i := 0; i+1 < len(fields); i += 2 {
		fill = append(fill, chromedp.SetValue(chromedp.CSS(fmt.Sprintf(`%s [name=%s]`, form, fields[i])), fields[i+1]))
	}
	Expect(chromedp.Do(bounded(), append(fill, chromedp.Click(chromedp.CSS(form+` button[type=submit]`)))...)).To(Succeed())
}

// screenshot saves the whole page as name.png in the suite's output directory.
func screenshot(name string) {
	GinkgoHelper()
	png, err := chromedp.Run(bounded(), chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)).To(Succeed())
}

// expectRefusals accepts the browser's log lines of the refusals (codes, a
// regular expression such as 40[13]) of the facade at base under path that
// a spec asks for on purpose: the browser logs every failed request.
func expectRefusals(base, codes, path string) {
	problems.Lock()
	defer problems.Unlock()
	problems.expected = append(problems.expected, regexp.MustCompile(
		`^error: Failed to load resource: the server responded with a status of (`+codes+`) \([^)]*\) \(`+regexp.QuoteMeta(base+path)))
}
