#!/usr/bin/env bash
# Makes sure a Chromium is installed for the dashboard's browser test
# (test/integration/dashboard): $CALDERA_CHROMIUM, a chromium on the PATH,
# else Debian's chromium package, installed with apt-get (as root, or with
# sudo when it asks for no password).
set -euo pipefail

if [ -n "${CALDERA_CHROMIUM:-}" ]; then
  exit 0
fi
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done
sudo=""
if [ "$(id -u)" != 0 ]; then
  if sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "install-chromium: no Chromium, and no root to install Debian's chromium package:" >&2
    echo "  install it (apt-get install chromium) or set CALDERA_CHROMIUM to a Chromium or Chrome binary" >&2
    exit 1
  fi
fi
echo "install-chromium: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends chromium >/dev/null; then
  $sudo apt-get update >/dev/null
  $sudo apt-get install -y --no-install-recommends chromium >/dev/null
fi
command -v chromium >/dev/null
