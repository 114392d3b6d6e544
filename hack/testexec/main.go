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

// Command testexec runs one test binary for go test -exec (make test): in
// a process group of its own, with every process it starts reaped when it
// ends, passed or failed, timed out or interrupted. A package that passes
// but leaves a process running fails (test/framework/reaper).
package main

import (
	"fmt"
	"os"

	"github.com/edgeplane/edgeplane/test/framework/reaper"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testexec TEST-BINARY [ARG...]")
		os.Exit(2)
	}
	os.Exit(reaper.Run(os.Args[1:], os.Stderr))
}
