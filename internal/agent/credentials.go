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

package agent

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// credentials reads the registry credentials of the node's services from
// the node's own Secret, which the manager fills and which is the only
// Secret the agent may read. It is read at each create that needs it, so
// that rotated credentials take effect at the next pull; the last one read
// is kept in memory (never on disk) for creates while the link is down.
type credentials struct {
	c    client.Reader
	key  types.NamespacedName
	mu   sync.Mutex // instance workers ask at once
	last map[string][]byte
}

// of returns a service's credentials, and false while the manager has not
// copied them for the node yet: the create waits rather than failing with
// a refusal the registry would not give a moment later.
func (k *credentials) of(ctx context.Context, svc *assigned) ([]byte, bool, error) {
	if len(svc.Spec.Image.PullSecretRefs) == 0 {
		return nil, true, nil
	}
	s := &corev1.Secret{}
	get := func(ctx context.Context) error { return k.c.Get(ctx, k.key, s) }
	err := bounded(ctx, get)
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err == nil:
		k.last = s.Data
	case apierrors.IsNotFound(err):
		k.last = nil
	case k.last == nil:
		return nil, false, err
	}
	v, ok := k.last[edgev1alpha1.NodeCredentialsKey(svc.Namespace, svc.Name)]
	return v, ok, nil
}
