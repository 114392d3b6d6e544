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
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/testregistry"
)

// stalledPull runs images services of as many images on one node, from a
// registry on loopback, one of them behind a link that sends nothing: it
// returns how long the others took to run, and the longest gap between
// two renewals of the node's Lease meanwhile.
func stalledPull(ctx context.Context, c client.Client, dir, node string, images int) (others, maxGap time.Duration, err error) {
	reg, err := testregistry.Start(map[string]string{"robot": "bench"}, dir)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = reg.Close() }()
	stalled, err := testenv.StartProxy(reg.Host)
	if err != nil {
		return 0, 0, err
	}
	defer stalled.Close()
	stalled.SetRate(-1)
	for i := range images {
		if err := reg.PushBox(fmt.Sprintf("edgeplane/img-%02d", i), "1", "robot", "bench"); err != nil {
			return 0, 0, err
		}
	}
	auths := fmt.Sprintf(`{"auths":{%q:{"username":"robot","password":"bench"},%q:{"username":"robot","password":"bench"}}}`, reg.Host, stalled.Addr())
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bench-registry"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(auths)}}
	if err := c.Create(ctx, creds); err != nil {
		return 0, 0, err
	}

	// The Lease's renewals, as the API server holds them, every 100 ms.
	lctx, stopWatching := context.WithCancel(ctx)
	var mu sync.Mutex
	var renewals []time.Time
	var wg sync.WaitGroup
	wg.Go(func() {
		for lctx.Err() == nil {
			l := &coordinationv1.Lease{}
			if err := c.Get(lctx, client.ObjectKey{Namespace: "edgeplane-node-lease", Name: node}, l); err == nil && l.Spec.RenewTime != nil {
				mu.Lock()
				if n := len(renewals); n == 0 || !renewals[n-1].Equal(l.Spec.RenewTime.Time) {
					renewals = append(renewals, l.Spec.RenewTime.Time)
				}
				mu.Unlock()
			}
			select {
			case <-lctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})

	start := time.Now()
	for i := range images {
		host := reg.Host
		if i == 0 {
			host = stalled.Addr()
		}
		svc := service(fmt.Sprintf("img-%02d", i), node)
		svc.Spec.Image.Ref = edgev1alpha1.ImageRef(fmt.Sprintf("img-%02d@1#linux", i))
		svc.Spec.Image.Path = fmt.Sprintf("%s/edgeplane/img-%02d", host, i)
		svc.Spec.Image.PullSecretRefs = []edgev1alpha1.LocalSecretReference{{Name: creds.Name}}
		if err := c.Create(ctx, svc); err != nil {
			stopWatching()
			return 0, 0, err
		}
	}
	err = procs.WaitFor(ctx, "every image but the stalled one running", 100*time.Millisecond, func() (bool, error) {
		ok := 0
		for i := 1; i < images; i++ {
			s := &edgev1alpha1.EdgeService{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("img-%02d", i)}, s); err != nil {
				return false, err
			}
			if cs, err := testenv.Instances(ctx, c, s.Namespace, s.Name); err == nil && len(cs) == 1 && cs[0].DeployStatus == edgev1alpha1.DeploySuccess {
				ok++
			}
		}
		return ok == images-1, nil
	})
	others = time.Since(start)
	stopWatching()
	wg.Wait()
	if err != nil {
		return 0, 0, err
	}
	for i := 1; i < len(renewals); i++ {
		maxGap = max(maxGap, renewals[i].Sub(renewals[i-1]))
	}
	if len(renewals) < 2 {
		fmt.Fprintln(os.Stderr, "agentbench: fewer than two renewals seen during the stalled pull")
	}
	for i := range images {
		_ = c.Delete(ctx, &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("img-%02d", i)}})
	}
	// Gone before the next measurement counts the node's services.
	err = procs.WaitFor(ctx, "the images' services gone", 200*time.Millisecond, func() (bool, error) {
		for i := range images {
			err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("img-%02d", i)}, &edgev1alpha1.EdgeService{})
			if err == nil || !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
	return others, maxGap, err
}
