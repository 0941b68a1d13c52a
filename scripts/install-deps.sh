#!/usr/bin/env bash
# Installs what the build and tests need on Debian 12, only what is missing.
# Called by `make run` and `make test`; idempotent and quiet when nothing is missing.
set -euo pipefail
pkgs=(cmake g++ make libboost1.81-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libsqlite3-dev
      libgtest-dev libcli11-dev libyaml-cpp-dev libssl-dev ninja-build ccache python3 wrk
      zsh fish  # zsh, fish: the completion scripts are tested in the shells they are for
      libre2-dev pkgconf  # RE2 for user patterns (core/user_regex.h), found through pkg-config
      libpugixml-dev  # reads test runners' JUnit XML files (classifier/junit_report.h)
      clang libclang-rt-dev
      lld)  # the linker CMake picks when it is there (cmake/BuildSpeed.cmake): test links in a fraction of GNU ld's time
# clang and libFuzzer for the fuzz tests (tests/fuzz/): Debian's clang only recommends the runtime
# libraries that hold libFuzzer (libclang-rt-dev), and --no-install-recommends below skips those.
if [[ "${GAUNTLET_BROWSER_TESTS:-1}" == 1 ]]; then pkgs+=(chromium); command -v npm >/dev/null || pkgs+=(nodejs npm); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
