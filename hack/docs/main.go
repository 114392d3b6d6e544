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

// Command docs writes the generated references of docs/reference: the CRD
// reference (api.md), the facade's (facade.md) and the commands'
// (commands.md). make docs runs it from the repository's root.
//
//	go run ./hack/docs [--out docs/reference]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/edgeplane/edgeplane/hack/docs/reference"
)

func main() {
	out := flag.String("out", "docs/reference", "Directory to write the references into.")
	root := flag.String("root", ".", "The repository's root.")
	flag.Parse()
	if err := reference.Write(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		os.Exit(1)
	}
}
