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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// InstallAdmission creates the admission policies of config/admission, as
// config/default installs them, and waits until kube-apiserver applies
// them: until a dry-run create of an EdgeService comes back holding the
// finalizer. A suite that creates services at once would otherwise see
// the policy take effect halfway through.
func InstallAdmission(ctx context.Context, c client.Client) error {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "admission", "service-finalizer.yaml"))
	if err != nil {
		return err
	}
	objs, err := DecodeYAML(raw)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		probe := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe"},
			Spec: edgev1alpha1.EdgeServiceSpec{
				DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "probe@1#linux", Path: "probe.local/probe"}, Policy: edgev1alpha1.PolicyStatic},
				Nodes:      []string{"probe"},
			},
		}
		err := c.Create(ctx, probe, client.DryRunAll)
		if err == nil && slices.Contains(probe.Finalizers, edgev1alpha1.FinalizerContainers) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the finalizer policy took no effect within 30 s (last create: %v)", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
