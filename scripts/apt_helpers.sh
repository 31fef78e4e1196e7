# Sourced by scripts/ensure_browser.sh and scripts/ensure_haproxy.sh: what both need to install a
# Debian package when they run as root.

export DEBIAN_FRONTEND=noninteractive

is_root() { [ "$(id -u)" = 0 ]; }
has_apt() { command -v apt-get >/dev/null 2>&1; }

# apt-get install, running `apt-get update` first only when the package lists are stale or empty.
apt_install() {
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 && return 0
  echo "apt-get install $* failed; updating the package lists and retrying..."
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
