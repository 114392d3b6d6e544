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

// Command chartpkg packages the Helm chart for a release (make release),
// as helm package --version --app-version does, with Helm's own library,
// and points the chart's default image at the release's registry:
//
//	go run ./hack/chartpkg --chart charts/edgeplane --version 0.1.0 \
//	  --app-version v0.1.0 --image-repository registry.example/edgeplane/manager --out dist/release/v0.1.0
//
// It prints the path of the archive, <name>-<version>.tgz.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

func main() {
	dir := flag.String("chart", "charts/edgeplane", "Directory of the chart.")
	version := flag.String("version", "", "The chart's version (SemVer, no leading v), e.g. 0.1.0.")
	appVersion := flag.String("app-version", "", "The chart's appVersion: the default tag of the manager image, e.g. v0.1.0.")
	repository := flag.String("image-repository", "", "The manager image's repository in values.yaml (image.repository); empty keeps the chart's.")
	out := flag.String("out", "dist", "Directory the archive is written to.")
	flag.Parse()
	if *version == "" || *appVersion == "" {
		fmt.Fprintln(os.Stderr, "chartpkg: --version and --app-version are needed")
		os.Exit(2)
	}
	path, err := pkg(*dir, *version, *appVersion, *repository, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartpkg:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

// pkg loads the chart, sets its versions and image repository, and saves
// it as an archive in out.
func pkg(dir, version, appVersion, repository, out string) (string, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return "", err
	}
	c.Metadata.Version, c.Metadata.AppVersion = version, appVersion
	if repository != "" {
		if err := setRepository(c, repository); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(c, out)
}

// defaultRepository is the line of values.yaml that names the image's
// repository; the file is edited as text so that its comments stay.
const defaultRepository = "  repository: edgeplane/manager\n"

// setRepository sets image.repository in the chart's values.yaml, which
// must hold defaultRepository exactly once.
func setRepository(c *chart.Chart, repository string) error {
	for _, f := range c.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		if n := bytes.Count(f.Data, []byte(defaultRepository)); n != 1 {
			return fmt.Errorf("%s holds %q %d times; want once", f.Name, defaultRepository, n)
		}
		f.Data = bytes.Replace(f.Data, []byte(defaultRepository), []byte("  repository: "+repository+"\n"), 1)
		values, err := chartutil.ReadValues(f.Data)
		if err != nil {
			return err
		}
		c.Values = values
		if got, _ := values.PathValue("image.repository"); got != repository {
			return fmt.Errorf("%s: image.repository is %v after the edit; want %s", f.Name, got, repository)
		}
		return nil
	}
	return fmt.Errorf("the chart has no %s", chartutil.ValuesfileName)
}
