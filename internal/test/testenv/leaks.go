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
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/edgeplane/edgeplane/internal/test/leaks"
)

// leakWait is how long LeakCheck waits for goroutines to end.
const leakWait = 40 * time.Second

// LeakCheck notes the goroutines running now; the function it returns
// fails the spec or suite that calls it when goroutines started since
// still run after leakWait.
func LeakCheck() func() {
	current := goleak.IgnoreCurrent()
	return func() {
		ginkgo.GinkgoHelper()
		// A manager stops within its graceful shutdown (30 s); goleak's
		// own retries wait well under a second.
		var err error
		for end := time.Now().Add(leakWait); ; time.Sleep(250 * time.Millisecond) {
			if err = goleak.Find(append(leaks.Allowed(), current)...); err == nil || time.Now().After(end) {
				break
			}
		}
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "goroutines outlive the components the suite stopped")
	}
}

// CheckLeaks, called in a BeforeSuite before StartSuite, fails the suite
// when goroutines started after it still run once the suite's cleanup
// ran: the control plane stopped, the suite's context cancelled, so every
// component started on it must have ended.
func CheckLeaks() {
	ginkgo.DeferCleanup(LeakCheck())
}
