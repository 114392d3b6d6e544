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

// Package registryauth reads and merges registry credentials in the
// format of Secrets of type kubernetes.io/dockerconfigjson (Docker's
// config.json: {"auths": {"<registry>": {...}}}), and picks the entry
// for an image, as the kubelet does with image pull secrets.
package registryauth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// Entry is one registry's credentials.
type Entry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"` // base64 of username:password
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// Config is a Docker config.json: credentials by registry.
type Config struct {
	Auths map[string]Entry `json:"auths"`
}

// Parse reads a config, refusing one that is not a Docker config.json.
func Parse(data []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("not a Docker config.json: %w", err)
	}
	if c.Auths == nil {
		c.Auths = map[string]Entry{}
	}
	return c, nil
}

// Merge merges configs in order: the first one that has a registry wins
// it, as the kubelet tries pull secrets in order.
func Merge(configs ...Config) Config {
	out := Config{Auths: map[string]Entry{}}
	have := map[string]bool{}
	for _, c := range configs {
		for host, e := range c.Auths {
			if key := Host(host); !have[key] {
				have[key] = true
				out.Auths[host] = e
			}
		}
	}
	return out
}

// Host normalises a config key to a registry host: keys may carry a
// scheme and a path (https://index.docker.io/v1/), and Docker Hub has
// several names.
func Host(key string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	switch h {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return h
}

// For returns the credentials for an image's registry, and whether the
// config has any.
func For(c Config, image string) (Entry, string, bool, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return Entry{}, "", false, fmt.Errorf("image %s: %w", image, err)
	}
	domain := reference.Domain(named)
	for key, e := range c.Auths {
		if Host(key) == domain {
			if e.Username == "" && e.Password == "" && e.Auth != "" {
				if raw, err := base64.StdEncoding.DecodeString(e.Auth); err == nil {
					e.Username, e.Password, _ = strings.Cut(string(raw), ":")
				}
			}
			return e, domain, true, nil
		}
	}
	return Entry{}, domain, false, nil
}
