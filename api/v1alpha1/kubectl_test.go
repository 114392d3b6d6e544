package v1alpha1_test

import (
	"bytes"
	"io"
)

// kubectl runs the kubectl of the envtest binaries against the test API server.
func kubectl(args ...string) (string, error) {
	cmd := testEnv.ControlPlane.KubeCtl()
	stdout, stderr, err := cmd.Run(args...)
	var out bytes.Buffer
	_, _ = io.Copy(&out, stdout)
	_, _ = io.Copy(&out, stderr)
	return out.String(), err
}
