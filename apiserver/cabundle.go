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

package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,resourceNames=v1.facade.edge.edgeplane.io,verbs=get;patch

// AggregatedAPIService is the name of the facade's APIService.
const AggregatedAPIService = AggregatedVersion + "." + AggregatedGroup

// caBundleRetry is how soon a failed caBundle update is tried again: the
// APIService may not exist yet, or the API server may be away.
const caBundleRetry = 30 * time.Second

// servingCA is what kube-apiserver must trust to call the facade: ca.crt
// beside the certificate when there is one (cert-manager writes it), else
// the last certificate of the chain, which Go's verifier accepts as the
// trust anchor (for a self-signed certificate, the certificate itself).
func servingCA(certFile string) ([]byte, error) {
	if ca, err := os.ReadFile(filepath.Join(filepath.Dir(certFile), "ca.crt")); err == nil && len(ca) > 0 {
		return ca, nil
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	var last *pem.Block
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			last = b
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%s holds no certificate", certFile)
	}
	return pem.EncodeToMemory(last), nil
}

// keepCABundle keeps spec.caBundle of the facade's APIService set to the
// CA of the serving certificate, now and whenever the certificate
// changes, so that the aggregation layer trusts the facade without anyone
// copying a CA by hand. The shipped APIService leaves caBundle out, so that
// applying the bundle again never takes it back.
func (s *Server) keepCABundle(ctx context.Context, changed <-chan struct{}) {
	for {
		err := s.patchCABundle(ctx)
		if err != nil {
			s.log.Error(err, "Cannot set the CA of the facade's APIService yet; retrying", "apiService", s.opts.APIService)
		}
		var retry <-chan time.Time
		if err != nil {
			retry = time.After(caBundleRetry)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-retry:
		}
	}
}

func (s *Server) patchCABundle(ctx context.Context) error {
	ca, err := servingCA(s.opts.TLSCertFile)
	if err != nil {
		return err
	}
	as := &unstructured.Unstructured{}
	as.SetAPIVersion("apiregistration.k8s.io/v1")
	as.SetKind("APIService")
	if err := s.live.Get(ctx, client.ObjectKey{Name: s.opts.APIService}, as); err != nil {
		return err
	}
	if spec, ok := as.Object["spec"].(map[string]any); ok && spec["caBundle"] != nil {
		if have, _ := spec["caBundle"].(string); have == base64.StdEncoding.EncodeToString(ca) {
			return nil // no write when nothing changed
		}
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"caBundle": ca}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if err := s.writer.Patch(ctx, as, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	s.log.Info("Set the CA of the facade's APIService", "apiService", s.opts.APIService)
	return nil
}
