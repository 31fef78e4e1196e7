#!/usr/bin/env bash
# Install the live class's PyICU (requirements-class.txt) into the venv of PYTHON.
#   scripts/ensure_class_deps.sh PYTHON STAMP             `make serve-class`, `make test`: needed
#   scripts/ensure_class_deps.sh --optional PYTHON STAMP  `make run`: the app runs without it
# PyICU has no prebuilt wheels on PyPI: pip compiles it against the system's ICU, which needs ICU's
# headers, pkg-config and a C++ compiler.
#   1. STAMP newer than requirements-class.txt -> installed already, nothing to do;
#   2. `pkg-config --exists icu-uc icu-i18n` and a C++ compiler, or root on Debian/Ubuntu (apt-get
#      install libicu-dev pkg-config g++) -> pip install -r requirements-class.txt, touch STAMP;
#   3. otherwise -> needed: say what to install and fail; --optional: say in one line what the live
#      class is missing and how to add it, and succeed (a learner's laptop, non-root or macOS, still
#      runs the app; its class page says the same). A failed build is said the same way, its
#      output kept in pyicu-build.log beside STAMP; while that log is there, --optional does not
#      build again.
# pip keeps the wheel it builds (~1.5 min of CPU) in its cache: later venvs install it at once.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=scripts/apt_helpers.sh
. "$here/apt_helpers.sh"  # is_root, has_apt, apt_install

optional=0
if [ "${1:-}" = --optional ]; then
  optional=1
  shift
fi
if [ $# -ne 2 ]; then
  echo "usage: $0 [--optional] PYTHON STAMP" >&2
  exit 2
fi
py=$1
stamp=$2
requirements="$here/../requirements-class.txt"
if [ -e "$stamp" ] && [ "$stamp" -nt "$requirements" ]; then
  exit 0
fi

ready() {
  command -v pkg-config >/dev/null 2>&1 && pkg-config --exists icu-uc icu-i18n && command -v "${CXX:-c++}" >/dev/null 2>&1
}

off() {  # the one line of `make run` when the live class cannot have PyICU here
  echo "Live class off: $1; the rest of the app works. To add it: sudo apt-get install libicu-dev pkg-config g++ (Debian/Ubuntu; macOS and others: docs/running.md), then make run again."
}

if ! ready; then
  if is_root && has_apt; then
    echo "Installing ICU's headers, pkg-config and g++ (to build PyICU, the live class's nickname checks)..."
    if ! apt_install libicu-dev pkg-config g++; then
      [ $optional = 1 ] || exit 1
      off "PyICU needs ICU's headers, and apt-get could not install them"
      exit 0
    fi
  elif [ $optional = 1 ]; then
    off "PyICU (its nickname checks) is not installed, and building it needs ICU's headers, pkg-config and a C++ compiler"
    exit 0
  else
    echo "PyICU (the live class's nickname checks) is built against ICU and needs its headers:" >&2
    echo "  Debian/Ubuntu: sudo apt-get install libicu-dev pkg-config g++" >&2
    echo "  Fedora: sudo dnf install libicu-devel pkgconf-pkg-config gcc-c++;  macOS: brew install icu4c pkg-config" >&2
    echo "  (with Homebrew, also: export PKG_CONFIG_PATH=\"\$(brew --prefix icu4c)/lib/pkgconfig\")" >&2
    exit 1
  fi
fi

if [ $optional = 1 ]; then
  log="$(dirname "$stamp")/pyicu-build.log"
  if [ -e "$log" ] && [ "$log" -nt "$requirements" ]; then  # a build takes a minute or more: not on every start
    off "PyICU did not build (pip's output: $log; remove it to try again)"
    exit 0
  fi
  if ! "$py" -m pip install -q -r "$requirements" >"$log" 2>&1; then
    off "PyICU did not build (pip's output: $log)"
    exit 0
  fi
  rm -f "$log"
else
  "$py" -m pip install -q -r "$requirements"
fi
touch "$stamp"
