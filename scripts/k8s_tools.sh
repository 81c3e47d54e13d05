#!/usr/bin/env bash
# The pinned Go tools the Kubernetes validation runs (`make validate-k8s`), built from the
# Go module proxy into .tools/bin: kustomize renders the overlays, promtool checks and tests
# the alert rules, crdcheck (deploy/k8s/crdcheck) decodes the custom resources strictly.
# Each is rebuilt only when its pinned version changes (a stamp file per tool), so a warm
# machine spends nothing here; a fresh one needs Go (1.26) and a few minutes (README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.tools"
BIN="$TOOLS/bin"
KUSTOMIZE_VERSION=v5.8.2
# Prometheus's Go module tags v0.3XX.Y are its v3.XX.Y releases.
PROMETHEUS_VERSION=v0.316.0
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
# The machine's Go, never a toolchain download.
export GOTOOLCHAIN=local GOBIN="$BIN"
mkdir -p "$BIN"

stamp() { echo "$BIN/.$1-$2"; }

build() {  # name version command...
  local name="$1" version="$2"
  shift 2
  if [ -x "$BIN/$name" ] && [ -e "$(stamp "$name" "$version")" ]; then return; fi
  echo "building $name $version into .tools/bin" >&2
  local started=$SECONDS log="$TOOLS/build-$name.log"
  # The module downloads print a line each: kept in a log, shown when the build fails.
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "k8s_tools: building $name failed (whole log: $log)" >&2
    exit 1
  fi
  rm -f "$BIN/.$name-"*
  touch "$(stamp "$name" "$version")"
  echo "$name $version built in $((SECONDS - started)) s" >&2
}

if ! [ -x "$GO" ]; then
  echo "k8s_tools: Go not found (set GO=/path/to/go); it builds kustomize and promtool" >&2
  exit 1
fi
build kustomize "$KUSTOMIZE_VERSION" \
  "$GO" install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
# remove_all_sd leaves out the cloud service discoveries (AWS, Azure, GCE, ...): promtool's
# rule checks and tests need none, and they are most of its build time.
build promtool "$PROMETHEUS_VERSION" \
  "$GO" install -tags remove_all_sd \
  "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION"
# crdcheck's versions are pinned by its go.sum; the stamp follows that file's content.
CRDCHECK_VERSION="$(sha256sum deploy/k8s/crdcheck/go.sum deploy/k8s/crdcheck/main.go \
  | sha256sum | cut -c1-12)"
build crdcheck "$CRDCHECK_VERSION" \
  bash -c 'cd deploy/k8s/crdcheck && "$0" build -buildvcs=false -o "$1/crdcheck" .' "$GO" "$BIN"
