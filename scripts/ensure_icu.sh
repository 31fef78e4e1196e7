#!/usr/bin/env bash
# Make PyICU buildable (requirements.txt): it has no prebuilt wheels on PyPI and compiles against the
# system's ICU, so it needs ICU's headers, pkg-config and a C++ compiler.
#   1. `pkg-config --exists icu-uc icu-i18n` and a C++ compiler -> nothing to do;
#   2. root on Debian/Ubuntu -> apt-get install libicu-dev pkg-config g++;
#   3. otherwise -> say what to install and fail.
# pip keeps the wheel it builds (~1.5 min of CPU) in its cache: later venvs install it at once.
set -euo pipefail
# shellcheck source=scripts/apt_helpers.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt_helpers.sh"  # is_root, has_apt, apt_install

ready() {
  command -v pkg-config >/dev/null 2>&1 && pkg-config --exists icu-uc icu-i18n && command -v "${CXX:-c++}" >/dev/null 2>&1
}

if ! ready; then
  if is_root && has_apt; then
    echo "Installing ICU's headers, pkg-config and g++ (to build PyICU)..."
    apt_install libicu-dev pkg-config g++
  else
    echo "PyICU (the live class's nickname checks) is built against ICU and needs its headers:" >&2
    echo "  Debian/Ubuntu: sudo apt-get install libicu-dev pkg-config g++" >&2
    echo "  Fedora: sudo dnf install libicu-devel pkgconf-pkg-config gcc-c++;  macOS: brew install icu4c pkg-config" >&2
    echo "  (with Homebrew, also: export PKG_CONFIG_PATH=\"\$(brew --prefix icu4c)/lib/pkgconfig\")" >&2
    exit 1
  fi
fi
