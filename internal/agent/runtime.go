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
	"errors"
	"math"
	"strconv"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// Runtime is the seam between the node loop and a container engine, in the
// shape of CRI: the node loop decides, a runtime only does what it is told
// and says what it sees. docs/agent.md says what a new runtime implements.
type Runtime interface {
	// Ping checks that the engine answers. The node loop probes with it
	// every RuntimeProbeInterval, and at once after a call that failed;
	// while it fails the loop makes no other call and reports the node's
	// containers in an unknown state.
	Ping(ctx context.Context) error
	// Info describes the node as the engine sees it.
	Info(ctx context.Context) (RuntimeInfo, error)
	// List returns every container on the node, edgeplane's and others'.
	// Fields other than ID, Name, Labels and State may be left empty.
	List(ctx context.Context) ([]Container, error)
	// Inspect returns one container in full; ErrNotFound when it is gone.
	Inspect(ctx context.Context, id string) (Container, error)
	// ImageOf is the engine's name of the image a spec runs: what HasImage
	// and PullImage take. Instances with one image share one pull.
	ImageOf(spec ContainerSpec) (string, error)
	// HasImage says whether the engine holds an image.
	HasImage(ctx context.Context, image string) (bool, error)
	// PullImage pulls an image with a service's registry credentials (a
	// Docker config.json; nil for none), calling progress whenever bytes
	// arrive or a layer changes state, and returns when the pull ends or
	// ctx is done. The node's puller, not the runtime, applies the pull
	// policy, bounds parallel pulls and cuts a pull that stalls.
	PullImage(ctx context.Context, image string, creds []byte, progress func(PullProgress)) error
	// Create creates (not starts) the container of a spec whose image is
	// present; it returns the runtime id. An error is shown to users as
	// the instance's failedMessage, so it says what went wrong in words a
	// person understands.
	Create(ctx context.Context, spec ContainerSpec) (string, error)
	// Start starts a created container.
	Start(ctx context.Context, id string) error
	// Stop stops a container, giving it timeout to exit before it is killed.
	Stop(ctx context.Context, id string, timeout time.Duration) error
	// Remove removes a stopped container; ErrNotFound when it is gone.
	Remove(ctx context.Context, id string) error
	// Stats samples a running container's figures.
	Stats(ctx context.Context, id string) (Stats, error)
	// Events streams the ids of containers whose state changed, until ctx
	// is done or the stream breaks; then the channel is closed and the node
	// loop lists everything again before it subscribes anew.
	Events(ctx context.Context) <-chan string
}

// ErrNotFound is returned (wrapped) for a container the engine does not have.
var ErrNotFound = errors.New("no such container")

// Labels on every container the agent creates: a restarted agent finds its
// containers by them and never touches one without them.
const (
	LabelNode     = "io.edgeplane.node"
	LabelTaskID   = "io.edgeplane.task-id"
	LabelRevision = "io.edgeplane.revision"
	LabelService  = "io.edgeplane.service" // namespace/name
	LabelImageRef = "io.edgeplane.image-ref"
)

// RuntimeInfo describes a node as its engine sees it.
type RuntimeInfo struct {
	Type, Arch, OSVersion, RuntimeVersion string
	// BootTime is when the node booted; zero when unknown.
	BootTime time.Time
}

// Container is a container as the engine sees it.
type Container struct {
	ID, Name string
	Labels   map[string]string
	State    edgev1alpha1.ContainerState
	// Image is the engine's image name, ImageID its id.
	Image, ImageID       string
	CreatedAt, StartedAt time.Time
	RestartCount         int32
	ExitCode             int
	OOMKilled            bool
	// Error is the engine's own message about the last start, if any.
	Error string
}

// TaskID is the instance the container runs; empty for containers that
// edgeplane did not create.
func (c *Container) TaskID() string { return c.Labels[LabelTaskID] }

// Revision is the service revision the container runs.
func (c *Container) Revision() int64 {
	r, _ := strconv.ParseInt(c.Labels[LabelRevision], 10, 64)
	return r
}

// ContainerSpec is what the node loop asks a runtime to create: one
// instance of a service at one revision.
type ContainerSpec struct {
	Name   string
	Labels map[string]string
	// Spec is the service's deployment configuration, as the node's
	// assignment holds it: read it, never change it.
	Spec *edgev1alpha1.DeploySpec
}

// PullProgress is how far a pull has come: bytes of the image's layers
// received, of those whose size is known. Status is the engine's last
// word on it ("Downloading", "Extracting").
type PullProgress struct {
	Done, Total int64
	Status      string
}

// Stats are a running container's figures at one moment.
type Stats struct {
	CPU    *edgev1alpha1.CPUUsage
	Memory *edgev1alpha1.MemoryUsage
	Size   *edgev1alpha1.SizeUsage
}

// Percent rounds a CPU share to the one decimal a node's status reports,
// as every runtime reports it.
func Percent(v float64) float64 { return math.Round(v*10) / 10 }
