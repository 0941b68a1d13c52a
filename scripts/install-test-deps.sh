#!/usr/bin/env bash
# Installs what the tests need beyond the build, only when missing: python3-pytest (Debian), and for the browser tests playwright-core from npm into
# tests/browser/node_modules, at the versions pinned by the committed package-lock.json.
# Chromium itself comes from Debian (scripts/install-deps.sh); no browser is ever downloaded.
# Set GAUNTLET_BROWSER_TESTS=0 to skip (the tests then report themselves skipped).
set -euo pipefail
# A real pytest for tests/integration/test_runner_test.cc (the test skips, saying so, without it).
if ! dpkg-query -W -f='${Status}' python3-pytest 2>/dev/null | grep -q "install ok installed"; then
  echo "install-test-deps: installing python3-pytest"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-pytest
fi
[[ "${GAUNTLET_BROWSER_TESTS:-1}" == 1 ]] || exit 0
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/browser"
want=$(node -p "require('$dir/package-lock.json').packages['node_modules/playwright-core'].version" 2>/dev/null || true)
have=$(node -p "require('$dir/node_modules/playwright-core/package.json').version" 2>/dev/null || true)
if [[ -n "$want" && "$want" == "$have" ]]; then exit 0; fi
if ! command -v npm >/dev/null; then
  echo "install-test-deps: npm is missing (scripts/install-deps.sh installs it); browser tests will be skipped" >&2
  exit 0
fi
echo "install-test-deps: installing playwright-core ${want:-} into tests/browser/node_modules"
# npm ci installs exactly the lock file; the skip variable keeps any browser download away.
cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
