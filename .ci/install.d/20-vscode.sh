#!/usr/bin/env bash
# Everything the VS Code end-to-end test (tests/editors/test_vscode.py) needs:
#   - Debian packages: chromium (the browser), ripgrep, and libkrb5-dev + pkg-config (code-server
#     compiles native modules while it installs)
#   - code-server $CODE_SERVER_VERSION (the real VS Code workbench + extension host) from npm into
#     $FABRIC_LSP_EDITOR_TOOLS/code-server-$CODE_SERVER_VERSION (default /opt/fabric-lsp-editors),
#     shared by every clone of the repo on the machine
#   - npm ci in vscode-client/ (extension build tools) and tests/editors/vscode/ (playwright-core)
#   - the extension package vscode-client/fabric-lsp-<version>.vsix, built by `npm run package`
#     (the fabric-lsp server and its pure-Python dependencies bundled in it, from PyPI)
# Idempotent: what is already there is kept (a rerun takes a minute or so, mostly the .vsix build).
# Needs Node.js >= 20 with npm, python3 >= 3.9 with pip, and root (or sudo) for apt. No download
# outside the registries (Debian, npm, PyPI).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
CODE_SERVER_VERSION="4.100.3"
RIPGREP_CACHE_VERSION="1.15.11" # @vscode/ripgrep's version inside code-server 4.100.3
tools="${FABRIC_LSP_EDITOR_TOOLS:-/opt/fabric-lsp-editors}"
cs_dir="$tools/code-server-$CODE_SERVER_VERSION"
cs_bin="$cs_dir/node_modules/.bin/code-server"
say() { echo "20-vscode: $*"; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

command -v node >/dev/null || { say "node (Node.js >= 20) is required"; exit 1; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then say "Node.js >= 20 is required, found $(node -v)"; exit 1; fi
python3 -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null && python3 -m pip --version >/dev/null 2>&1 \
  || { say "python3 >= 3.9 with pip is required (npm run package bundles the server with it)"; exit 1; }

# 1. Debian packages ----------------------------------------------------------------------------
apt_pkgs=()
for pkg in libkrb5-dev pkg-config ripgrep chromium; do
  dpkg -s "$pkg" >/dev/null 2>&1 || apt_pkgs+=("$pkg")
done
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "apt installing ${apt_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${apt_pkgs[@]}" >/dev/null; }
  if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq; fi
  apt_install || { $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq && apt_install; }
else
  say "chromium, ripgrep, libkrb5-dev, pkg-config already installed"
fi

# 2. code-server ----------------------------------------------------------------------------------
code_server_ok() {
  [ -x "$cs_bin" ] || return 1
  [ -f "$cs_dir/node_modules/code-server/lib/vscode/node_modules/node-pty/build/Release/pty.node" ] || return 1
  [ -x "$cs_dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] || return 1
  local scratch
  scratch=$(mktemp -d)
  # XDG_CONFIG_HOME: `code-server --version` writes a default config file there.
  XDG_CONFIG_HOME="$scratch" XDG_DATA_HOME="$scratch" "$cs_bin" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION " \
    && rm -rf "$scratch" || { rm -rf "$scratch"; return 1; }
}

if code_server_ok; then
  say "code-server $CODE_SERVER_VERSION already in $cs_dir"
else
  say "installing code-server $CODE_SERVER_VERSION into $cs_dir"
  # @vscode/ripgrep's post-install downloads rg from GitHub unless this cached tarball exists;
  # Debian's rg in it serves the same purpose.
  case "$(uname -m)" in
    x86_64) rg_target="x86_64-unknown-linux-musl" ;;
    aarch64) rg_target="aarch64-unknown-linux-gnu" ;;
    *) say "unsupported architecture $(uname -m)"; exit 1 ;;
  esac
  rg_cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RIPGREP_CACHE_VERSION"
  rg_tarball="$rg_cache/ripgrep-v13.0.0-10-$rg_target.tar.gz"
  if [ ! -s "$rg_tarball" ]; then
    staging=$(mktemp -d)
    cp "$(command -v rg)" "$staging/rg"
    mkdir -p "$rg_cache"
    tar -C "$staging" -czf "$rg_tarball.tmp" rg && mv "$rg_tarball.tmp" "$rg_tarball"
    rm -rf "$staging"
  fi
  # Install beside the final folder and move it in place only when complete.
  $SUDO mkdir -p "$tools"
  work="$cs_dir.partial.$$"
  $SUDO rm -rf "$work"
  $SUDO mkdir -p "$work"
  $SUDO chown "$(id -u):$(id -g)" "$work"
  echo '{"name": "fabric-lsp-code-server", "private": true}' >"$work/package.json"
  # npm_config_yes: node-pty's build runs `npx node-gyp`; code-server's post-install refuses to run
  # as root without npm_config_unsafe_perm.
  (cd "$work" && npm_config_yes=true npm_config_unsafe_perm=true npm install --no-audit --no-fund --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" >"$work/install.log" 2>&1) \
    || { tail -40 "$work/install.log"; say "code-server install failed (log: $work/install.log)"; exit 1; }
  $SUDO rm -rf "$cs_dir"
  $SUDO mv "$work" "$cs_dir"
  code_server_ok || { say "code-server installed but does not run"; exit 1; }
fi

# 3. npm packages of the extension and of the browser driver --------------------------------------
npm_ci() { # npm ci in $1 unless node_modules already matches package-lock.json
  local dir="$1" stamp="$1/node_modules/.fabric-lsp-lock-sha256" sum
  sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
    say "node_modules up to date in ${dir#"$repo"/}"
    return
  fi
  say "npm ci in ${dir#"$repo"/}"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$sum" >"$stamp"
}
npm_ci "$repo/vscode-client"
npm_ci "$repo/tests/editors/vscode"

# 4. The .vsix ------------------------------------------------------------------------------------
# `npm run package` runs vsce, whose vscode:prepublish script type checks, bundles the extension
# with esbuild and the server into bundled/libs (scripts/bundle_server.py).
(
  cd "$repo/vscode-client"
  rm -f ./*.vsix
  log=$(npm run package 2>&1) || { echo "$log"; say "npm run package failed"; exit 1; }
)
vsix=$(ls "$repo"/vscode-client/*.vsix)

say "$("$(command -v chromium)" --version 2>/dev/null | head -1)"
say "code-server $CODE_SERVER_VERSION in $cs_dir"
say "built ${vsix#"$repo"/}"
