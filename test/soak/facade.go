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

package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// httpClient is every facade client's: no request of the run waits
// longer than a person would.
var httpClient = &http.Client{Timeout: 10 * time.Second}

// facadeError is an answer of the facade other than 200, with its
// envelope's status and message.
type facadeError struct {
	Status  int
	Message string
}

func (e *facadeError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// facade sends one request to the facade at base and decodes the
// envelope's data into out (when not nil); any answer but the envelope
// with status 200 is an error.
func (r *run) facade(ctx context.Context, base, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var env struct {
		Status  int             `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return len(data), &facadeError{Status: resp.StatusCode, Message: "not the envelope: " + err.Error()}
	}
	if resp.StatusCode != http.StatusOK || env.Status != http.StatusOK {
		return len(data), &facadeError{Status: env.Status, Message: env.Message}
	}
	if out != nil {
		return len(data), json.Unmarshal(env.Data, out)
	}
	return len(data), nil
}

// write sends a write to the managers' facades, as a Service in front of
// them would: to the first that answers, the other when one is down or
// not ready (a failover's kill and the replacement's start).
func (r *run) write(ctx context.Context, method, path string, body, out any) error {
	var err error
	for _, addr := range r.managers.Facade {
		_, err = r.facade(ctx, "http://"+addr, method, path, body, out)
		var fe *facadeError
		if err == nil || errors.As(err, &fe) && fe.Status != http.StatusServiceUnavailable {
			return err
		}
	}
	return err
}
