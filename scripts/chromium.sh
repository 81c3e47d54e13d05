#!/usr/bin/env bash
# Debian's Chromium and ChromeDriver for the inspector's browser tests
# (tests/browser): installed with apt when missing. No test tool downloads a browser.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
echo "chromium not found; installing Debian's chromium and chromium-driver" >&2
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
