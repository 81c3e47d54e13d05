#!/usr/bin/env bash
# The inspector's browser libraries (uPlot, Cytoscape.js, jsdiff) from the npm registry at the
# versions of services/inspector/web/package-lock.json, copied into the package's
# static/vendor/ (not in git). Skipped when the copy matches the lock.
set -euo pipefail
cd "$(dirname "$0")/../services/inspector"
VENDOR=pcm_inspector/static/vendor
STAMP="$VENDOR/.lock-sha256"
want="$(sha256sum web/package-lock.json | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exit 0; fi
npm ci --prefix web --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
mkdir -p "$VENDOR"
cp web/node_modules/uplot/dist/uPlot.iife.min.js web/node_modules/uplot/dist/uPlot.min.css \
   web/node_modules/cytoscape/dist/cytoscape.min.js web/node_modules/diff/dist/diff.min.js "$VENDOR/"
echo "$want" > "$STAMP"
echo "inspector assets vendored into services/inspector/$VENDOR"
