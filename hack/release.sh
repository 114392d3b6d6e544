#!/usr/bin/env bash
# Cuts a release (make release VERSION=vX.Y.Z): every artifact, with an
# SBOM each and their checksums, into dist/release/VERSION/:
#
#   manager-linux-{amd64,arm64}.tar   the manager image, per platform (docker/podman load)
#   manager-oci.tar                   the same as one multi-platform OCI layout (skopeo copy --all oci-archive:...)
#   edge-agent-linux-{amd64,arm64,armv7}
#   edge-agent.service                the agent's systemd unit (config/agent)
#   kubectl-edge-linux-{amd64,arm64}
#   install.yaml                      the bundle, the manager image set
#   edgeplane-X.Y.Z.tgz               the chart: version X.Y.Z, appVersion vX.Y.Z, the image's repository set
#   <artifact>.cdx.json               an SBOM (CycloneDX) per artifact
#   CHANGELOG.md                      the version's section of CHANGELOG.md: the release notes
#   SHA256SUMS                        sha256sum -c SHA256SUMS checks every file above
#
# SBOMs are made by cyclonedx-gomod (hack/tool.sh) from the module
# information the Go toolchain embeds in each binary (go version -m). An
# image holds one binary, the manager: its SBOM is that binary's. The
# multi-platform layout, the bundle and the chart carry no code of their
# own: theirs is the manager's (linux/amd64), once the script has checked
# that every image platform links the same modules.
#
# Refused: a VERSION not vX.Y.Z, a CHANGELOG.md with no entries under
# "## X.Y.Z", a work tree with changes, a VERSION hack/releases.tsv
# records at another commit. RELEASE_TRIAL=1 allows the last three, for
# a trial cut (the install suite cuts its releases so): its notes say it
# is a trial. The last lines list the artifacts: sha256, bytes, name.
#
#   hack/release.sh VERSION
# Environment: RELEASE_REGISTRY (registry.example/edgeplane, a
# placeholder: the image is <registry>/manager:VERSION), IMAGE_PLATFORMS,
# AGENT_PLATFORMS, PLUGIN_PLATFORMS (os/arch[/arm version], spaces between),
# RELEASE_OUT (the directory, dist/release/VERSION), RELEASE_TRIAL.
set -euo pipefail
start=$SECONDS
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { echo "release: $*" >&2; }
die() { log "$*"; exit 1; }

version=${1:-}
registry=${RELEASE_REGISTRY:-registry.example/edgeplane}
image_platforms=${IMAGE_PLATFORMS:-linux/amd64 linux/arm64}
agent_platforms=${AGENT_PLATFORMS:-linux/amd64 linux/arm64 linux/arm/7}
plugin_platforms=${PLUGIN_PLATFORMS:-linux/amd64 linux/arm64}

[[ -n "$version" ]] || die "no version: make release VERSION=vX.Y.Z (e.g. VERSION=v0.1.0)"
[[ "$version" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
  die "VERSION=$version is not vX.Y.Z (e.g. v0.1.0)"
semver=${version#v}

# The release notes: the section "## X.Y.Z" of CHANGELOG.md (also
# "## [X.Y.Z]" and "## X.Y.Z - YYYY-MM-DD"), up to the next "## ".
notes=$(awk -v v="$semver" '
  /^## / {
    if (found) exit
    h = substr($0, 4); sub(/ - .*$/, "", h); gsub(/[][]/, "", h)
    if (h == v) { found = 1; print; next }
  }
  found { print }
' CHANGELOG.md)
trial=""
[[ "${RELEASE_TRIAL:-}" != 1 ]] || trial=1
if [[ "$trial" == 1 ]] && ! grep -q '^- ' <<<"$notes"; then
  notes=$(printf '## %s\n\n- A trial cut: CHANGELOG.md has no entries for it.\n' "$semver")
fi
[[ -n "$notes" ]] || die "CHANGELOG.md has no section \"## $semver\": move the entries of \"## Unreleased\" under it first"
grep -q '^- ' <<<"$notes" || die "CHANGELOG.md's section \"## $semver\" has no entries"

commit=$(git rev-parse HEAD)
dirty=$(git status --porcelain)
if [[ -n "$dirty" ]]; then
  [[ "$trial" == 1 ]] ||
    die "the work tree has changes (git status): a release is cut from a commit; RELEASE_TRIAL=1 for a trial"
  log "the work tree has changes: a trial, not a release of $commit"
fi
recorded=$(awk -F'\t' -v v="$version" '$1 == v { print $2 }' hack/releases.tsv 2>/dev/null || true)
# The commit that records the cut differs from the cut in that file alone.
if [[ "$trial" != 1 && -n "$recorded" && "$recorded" != HEAD-AT-CUT && "$recorded" != "$commit" ]] &&
  ! git diff --quiet "$recorded" "$commit" -- . ':(exclude)hack/releases.tsv' 2>/dev/null; then
  die "$version was cut at $recorded (hack/releases.tsv); check that commit out to build it again"
fi

out=${RELEASE_OUT:-dist/release/$version}
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/edgeplane-release.XXXXXX")
# A release that failed leaves nothing that looks like one.
trap 'rc=$?; rm -rf "$work"; [[ $rc == 0 ]] || rm -rf "$out"' EXIT
ldflags="-s -w -X github.com/edgeplane/edgeplane/internal/shared/version.version=$version"
host="$(go env GOHOSTOS)/$(go env GOHOSTARCH)"
cdx=$(hack/tool.sh cyclonedx-gomod)

# suffix os/arch[/arm] prints os-arch[vN], as make agent names its binaries.
suffix() {
  local os arch arm
  IFS=/ read -r os arch arm <<<"$1"
  echo "$os-$arch${arm:+v$arm}"
}

# build PLATFORM PACKAGE OUT builds a static binary stamped with VERSION
# and checks the stamp: --version must say it where the binary runs on
# this machine; elsewhere the binary must hold the string (with -trimpath
# the build information leaves out the -ldflags that set it).
build() {
  local os arch arm
  IFS=/ read -r os arch arm <<<"$1"
  log "building $3 ($1)"
  # The product module alone (GOWORK=off): the harness modules go.work
  # joins never take part in what ships.
  CGO_ENABLED=0 GOWORK=off GOOS=$os GOARCH=$arch GOARM=$arm go build -trimpath -ldflags "$ldflags" -o "$3" "$2"
  grep -q -a -F -- "$version" "$3" || die "$3 does not hold the version $version"
  if [[ "$os/$arch" == "$host" ]]; then
    local said
    said=$("$3" --version 2>&1) || die "$3 --version failed: $said"
    [[ "$said" == *"$version"* ]] || die "$3 --version says \"$said\", not $version"
    log "$(basename "$3") --version: $said"
  fi
}

# sbom BINARY ARTIFACT writes ARTIFACT.cdx.json from BINARY's module
# information. cyclonedx-gomod takes the platform of its package URLs
# from go env: it runs with the binary's GOOS, GOARCH and GOARM.
sbom() {
  local env
  env=$(go version -m "$1" | awk '$1 == "build" && $2 ~ /^GO(OS|ARCH|ARM)=/ { print $2 }')
  env $env "$cdx" bin -json -version "$version" -output "$out/$(basename "$2").cdx.json" "$1" 2>>"$work/sbom.log" ||
    { cat "$work/sbom.log" >&2; die "the SBOM of $2 failed"; }
  local arch=${env#*GOARCH=}
  arch=${arch%%[[:space:]]*}
  grep -q "goarch=$arch" "$out/$(basename "$2").cdx.json" || die "the SBOM of $2 names another platform than $arch"
}

# The manager image.
img=$registry/manager:$version
image_args=()
for p in $image_platforms; do
  bin=$work/manager-$(suffix "$p")
  build "$p" ./cmd/manager "$bin"
  image_args+=(--binary "$p=$bin")
done
log "building the image $img"
go run ./hack/image --name "$img" --entrypoint /manager --version "$version" --out "$work/images" "${image_args[@]}" >&2
for p in $image_platforms; do
  mv "$work/images/manager-$(suffix "$p").tar" "$out/"
  sbom "$work/manager-$(suffix "$p")" "$out/manager-$(suffix "$p").tar"
done
# The layout as an OCI archive: one file, its entries in a fixed order.
tar -C "$work/images/manager.oci" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/manager-oci.tar" .

# Every platform's manager links the same modules, so one SBOM stands for
# the artifacts that deploy the image on any platform.
first=$(set -- $image_platforms; echo "$1")
deps() { go version -m "$1" | awk '$1 == "dep" || $1 == "=>" { print $2, $3 }'; }
for p in $image_platforms; do
  diff <(deps "$work/manager-$(suffix "$first")") <(deps "$work/manager-$(suffix "$p")") >&2 ||
    die "the manager for $p links other modules than for $first: give each platform's artifacts their own SBOM"
done
manager=$work/manager-$(suffix "$first")
sbom "$manager" "$out/manager-oci.tar"

# The agent and the kubectl plugin.
for p in $agent_platforms; do
  build "$p" ./cmd/edge-agent "$out/edge-agent-$(suffix "$p")"
  sbom "$out/edge-agent-$(suffix "$p")" "$out/edge-agent-$(suffix "$p")"
done
for p in $plugin_platforms; do
  build "$p" ./cmd/kubectl-edge "$out/kubectl-edge-$(suffix "$p")"
  sbom "$out/kubectl-edge-$(suffix "$p")" "$out/kubectl-edge-$(suffix "$p")"
done

# The agent's systemd unit, which a device installs beside the agent.
cp config/agent/edge-agent.service "$out/"

# The bundle and the chart.
log "writing the bundle"
hack/build-installer.sh "$img" "$out/install.yaml" >/dev/null
sbom "$manager" "$out/install.yaml"
log "packaging the chart"
chart=$(go run ./hack/chartpkg --chart charts/edgeplane --version "$semver" --app-version "$version" \
  --image-repository "$registry/manager" --out "$out")
sbom "$manager" "$chart"

# The release notes.
{
  echo "# edgeplane $version"
  echo
  echo "Built from commit $commit${dirty:+, with changes}${trial:+ (a trial)}. The image: $img."
  echo
  sed '1d' <<<"$notes" | sed '/./,$!d'
} >"$out/CHANGELOG.md"

# Checksums over every file, then the list.
(cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum -- >SHA256SUMS)
(cd "$out" && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS does not check"
files=$(find "$out" -maxdepth 1 -type f | wc -l)
bytes=$(find "$out" -maxdepth 1 -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
log "$version at $commit: $files files, $bytes bytes in $out, $((SECONDS - start)) s"
log "check them: (cd $out && sha256sum -c SHA256SUMS)"
if [[ "$trial" == 1 ]]; then
  log "a trial: not to be recorded in hack/releases.tsv"
elif [[ -z "$recorded" || "$recorded" == HEAD-AT-CUT ]]; then
  log "record the release: printf '$version\\t$commit\\n' >>hack/releases.tsv (or replace HEAD-AT-CUT), and commit"
else
  log "hack/releases.tsv records $version at $recorded"
fi
echo "sha256 bytes artifact ($out)"
while read -r sum name; do
  printf '%s %s %s\n' "$sum" "$(stat -c %s "$out/$name")" "$name"
done <"$out/SHA256SUMS"
