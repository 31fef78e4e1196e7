#!/usr/bin/env bash
# Make PostgreSQL's server programs available for the live-class store's contract tests
# (tests/test_class_store.py starts a throwaway cluster with them; classroom/throwaway_postgres.py).
#   1. initdb/pg_ctl/postgres in $PG_BIN, `pg_config --bindir` or /usr/lib/postgresql/*/bin -> use them;
#   2. root on Debian/Ubuntu -> apt-get install postgresql (its own service is not started or used);
#   3. otherwise -> say how to install it; the tests then skip, or fail when CI=true.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

found() {
  local d
  for d in "${PG_BIN:-}" "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin; do
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

if ! bindir=$(found); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's postgresql (server programs for the class store's tests)..."
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1 || {
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    }
    bindir=$(found)
  else
    echo "PostgreSQL is not installed: the class store's PostgreSQL tests will skip (and fail when CI=true)." >&2
    echo "Install it as root, e.g. 'sudo apt-get install postgresql', or set PG_BIN=/path/to/bin." >&2
    exit 0
  fi
fi
echo "PostgreSQL: $bindir ($("$bindir/postgres" --version))"
