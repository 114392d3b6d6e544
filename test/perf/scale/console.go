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
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// consoleWindow is how long one open tab's requests are counted.
const consoleWindow = 60 * time.Second

// consoleCost opens the web console's overview in headless Chromium against
// the facade and measures what a person and the facade notice: the time to
// the first complete overview (every figure drawn from the contract), and
// the requests per second one open tab then costs the facade.
func consoleCost(ctx context.Context, facadeURL string) (string, error) {
	out, err := exec.CommandContext(ctx, "hack/chromium.sh").Output()
	if err != nil {
		return "", fmt.Errorf("hack/chromium.sh: %w", err)
	}
	dir, err := os.MkdirTemp("", "edgeplane-chromium")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	alloc, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(strings.TrimSpace(string(out))), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(dir),
		// Chromium's scratch directories outlive a killed browser: keep them in dir.
		chromedp.Env("TMPDIR="+dir), chromedp.WindowSize(1280, 900))...)
	defer cancel()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	// The browser's own start is not the console's: start it first.
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		return "", err
	}
	began := time.Now()
	if err := chromedp.Do(browser, chromedp.Navigate(facadeURL+"/console/#/"),
		chromedp.WaitVisible(chromedp.CSS(`.live[aria-busy="false"] .ring`))); err != nil {
		return "", err
	}
	first := time.Since(began)
	// The facade's answers the page has read so far: how many, their
	// bytes, and the largest node list.
	type reads struct{ N, Bytes, NodeList int }
	count := func() (reads, error) {
		return chromedp.Run(browser, chromedp.Evaluate[reads](`(() => {
			const es = performance.getEntriesByType('resource').filter(e => e.name.includes('/api/v1/'));
			return {N: es.length, Bytes: es.reduce((a, e) => a + e.decodedBodySize, 0),
				NodeList: Math.max(0, ...es.filter(e => new URL(e.name).pathname.endsWith('/api/v1/node')).map(e => e.decodedBodySize))};
		})()`))
	}
	if _, err := chromedp.Run(browser, chromedp.Evaluate[any](`performance.setResourceTimingBufferSize(1000000)`)); err != nil {
		return "", err
	}
	n0, err := count()
	if err != nil {
		return "", err
	}
	time.Sleep(consoleWindow)
	n1, err := count()
	if err != nil {
		return "", err
	}
	secs := consoleWindow.Seconds()
	return fmt.Sprintf("console: first_overview_s=%.2f tab_requests_per_s=%.2f tab_kb_per_s=%.1f window_s=%.0f node_list_kb=%.1f",
		first.Seconds(), float64(n1.N-n0.N)/secs, float64(n1.Bytes-n0.Bytes)/secs/1000, secs, float64(n1.NodeList)/1000), nil
}
