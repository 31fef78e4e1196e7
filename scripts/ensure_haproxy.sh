#!/usr/bin/env bash
# Make HAProxy available for the classroom deployment (deploy/, `make serve-class`) and its test
# (tests/browser/test_proxy_browser.py).
#   1. $HAPROXY or `haproxy` on the PATH (also /usr/sbin/haproxy) already there -> use it;
#   2. root on Debian/Ubuntu -> apt-get install haproxy (Debian 12 ships 2.6; 2.4 or newer is needed);
#   3. otherwise -> say how to install it and fail.
# The package's own service is not used: deploy/serve_class.py runs its own haproxy in the foreground
# with deploy/haproxy.cfg, on its own port.
set -euo pipefail
# shellcheck source=scripts/apt_helpers.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt_helpers.sh"  # is_root, has_apt, apt_install

find_haproxy() {
  local c
  for c in "${HAPROXY:-}" "$(command -v haproxy 2>/dev/null || true)" /usr/sbin/haproxy; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if ! haproxy=$(find_haproxy); then
  if is_root && has_apt; then
    echo "Installing Debian's haproxy..."
    apt_install haproxy
    haproxy=$(find_haproxy)
  else
    echo "HAProxy is needed for the classroom deployment and its browser test, and is not installed." >&2
    echo "Install it as root, e.g. 'sudo apt-get install haproxy' (Debian/Ubuntu) or 'sudo dnf install haproxy'," >&2
    echo "or point HAPROXY=/path/to/haproxy at one (2.4 or newer)." >&2
    exit 1
  fi
fi
version=$("$haproxy" -v 2>/dev/null | sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
echo "HAProxy: $haproxy ($version)"
case "$version" in
  1.* | 2.[0-3]) echo "HAProxy $version is too old: 2.4 or newer is needed" >&2; exit 1 ;;
esac
