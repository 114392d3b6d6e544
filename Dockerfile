# Builds the manager image where a container registry is reachable (docker
# buildx build --platform linux/amd64,linux/arm64 .). Machines that reach
# only the Go module proxy build the same image with `make image`.
ARG GOPROXY=https://proxy.golang.org,direct
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG GOPROXY
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ENV GOPROXY=$GOPROXY
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The product module alone: go.work would pull in the harness modules.
RUN CGO_ENABLED=0 GOWORK=off GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
    -ldflags "-s -w -X github.com/edgeplane/edgeplane/internal/shared/version.version=$VERSION" -o /manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
COPY --from=build /manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
