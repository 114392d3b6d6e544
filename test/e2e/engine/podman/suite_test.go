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

// Package podman_test runs the real-engine specs on Podman.
package podman_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/e2e/engine"
)

func TestPodman(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	testenv.RunSpecs(t, "Real container engine suite: Podman")
}

var _ = BeforeSuite(engine.Start)
var _ = AfterSuite(engine.Cleanup)

var _ = Describe("The agent on Podman", Ordered, func() { engine.Specs("podman") })
var _ = Describe("The manager image built by make image", Ordered, engine.ImageSpecs)
