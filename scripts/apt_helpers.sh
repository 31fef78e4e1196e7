# Sourced by scripts/ensure_browser.sh, ensure_haproxy.sh, ensure_axe.sh and ensure_npm_tools.sh: what they need to install a
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

# npm for the pinned test packages (scripts/ensure_axe.sh, scripts/ensure_npm_tools.sh): Debian's npm
# as root, else a message naming what cannot be fetched ($1) and failure.
ensure_npm() {
  command -v npm >/dev/null 2>&1 && return 0
  if is_root && has_apt; then
    echo "Installing npm..."
    apt_install npm
  else
    echo "npm is missing: cannot fetch $1" >&2
    return 1
  fi
}
