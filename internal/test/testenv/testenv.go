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

// Package testenv starts a real kube-apiserver and etcd (envtest) with the
// edgeplane CRDs installed, for the test suites of every package.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/shared/scheme"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// Scheme knows the built-in kinds and the edgeplane kinds.
var Scheme = scheme.Scheme

// RepoRoot is the root of the edgeplane repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// AssetsDir returns the directory holding kube-apiserver, etcd and kubectl:
// KUBEBUILDER_ASSETS when set, else the cache that hack/envtest-assets.sh
// fills (building the binaries on first use).
func AssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "hack", "envtest-assets.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/envtest-assets.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Start starts a new environment with the admission policies of
// config/admission installed, and returns it with a client for it.
func Start(configure ...func(*envtest.Environment) error) (*envtest.Environment, *rest.Config, client.Client, error) {
	env, err := New()
	if err != nil {
		return nil, nil, nil, err
	}
	for _, c := range configure {
		if err := c(env); err != nil {
			return nil, nil, nil, err
		}
	}
	cfg, err := StartEnv(env)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err == nil {
		err = InstallAdmission(context.Background(), c)
	}
	if err != nil {
		_ = env.Stop()
		return nil, nil, nil, err
	}
	return env, cfg, c, nil
}

// Stop stops env once cancel has ended this process's watches of it and
// each of ended is closed (a cache's Start returned; nil: never started),
// and fails when kube-apiserver had to be killed: it does not stop while
// a watch is open, and envtest waits its stop timeout, a minute, first.
func Stop(env *envtest.Environment, cancel context.CancelFunc, ended ...<-chan struct{}) error {
	cancel()
	for _, e := range ended {
		if e != nil {
			<-e
		}
	}
	if err := env.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver and etcd (is a watch of this process still open?): %w", err)
	}
	return nil
}

// WriteKubeconfig writes a kubeconfig of an administrator of env to path,
// for the real binaries a run starts.
func WriteKubeconfig(env *envtest.Environment, path string) error {
	return WriteUserKubeconfig(env, path, envtest.User{Name: "edgeplane-admin", Groups: []string{"system:masters"}})
}

// WriteUserKubeconfig writes a kubeconfig of a user of env to path; what
// the user may do is for RBAC to say.
func WriteUserKubeconfig(env *envtest.Environment, path string, u envtest.User) error {
	user, err := env.AddUser(u, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, kc, 0o600)
}

// New returns an envtest environment that installs the CRDs of config/crd/bases.
func New() (*envtest.Environment, error) {
	dir, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		CRDDirectoryPaths:        []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    dir,
		Scheme:                   Scheme,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}, nil
}

// envtest's own 20 s to start or stop each server is what a quiet machine
// needs; on a busy one, with other suites starting theirs, kube-apiserver
// takes longer. These are ceilings, not delays.
const (
	startTimeout = 3 * time.Minute
	stopTimeout  = time.Minute
	startTries   = 3
)

// StartEnv starts env as env.Start does, and stops what a failed start
// left running: envtest returns its error with etcd and kube-apiserver
// still up when the default namespace is not there within its fixed 5 s,
// which a busy machine exceeds; that case is tried again, startTries in
// all. Environments built without New get New's timeouts.
func StartEnv(env *envtest.Environment) (*rest.Config, error) {
	if env.ControlPlaneStartTimeout == 0 {
		env.ControlPlaneStartTimeout = startTimeout
	}
	if env.ControlPlaneStopTimeout == 0 {
		env.ControlPlaneStopTimeout = stopTimeout
	}
	var errs []error
	for try := 1; try <= startTries; try++ {
		cfg, err := env.Start()
		if err == nil {
			return cfg, nil
		}
		errs = append(errs, fmt.Errorf("try %d: %w", try, err))
		_ = env.Stop()
		if !strings.Contains(err.Error(), "default namespace") {
			break
		}
	}
	return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", errors.Join(errs...))
}

// ServiceAccountToken creates the ServiceAccount namespace/name unless it
// exists and returns a token of it for the audiences given (none: the API
// server's own), valid for ten minutes.
func ServiceAccountToken(ctx context.Context, cfg *rest.Config, namespace, name string, audiences ...string) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600), Audiences: audiences}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// DecodeYAML reads every object of a multi-document YAML stream, skipping
// empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// APIServerPID finds the process of the kube-apiserver that cfg talks to,
// by its --secure-port, for tests that stop and resume it.
func APIServerPID(cfg *rest.Config) (int, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return 0, err
	}
	return pidOf("kube-apiserver", "--secure-port="+u.Port())
}

// EtcdPID finds the process of the etcd that env runs, by its client URL.
func EtcdPID(env *envtest.Environment) (int, error) {
	return pidOf("etcd", "--listen-client-urls="+env.ControlPlane.Etcd.URL.String())
}

// pidOf finds a process by the base name of its binary and one argument,
// among this process's children: envtest starts its servers so. Under
// parallel test packages a server of another package (one still exiting,
// say) may carry the same port in its arguments; stopping it would stop
// another package's control plane, and this test would see no outage.
func pidOf(binary, arg string) (int, error) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if filepath.Base(args[0]) == binary && slices.Contains(args, arg) && procs.Parent(pid) == os.Getpid() {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s with %s among this process's children", binary, arg)
}
