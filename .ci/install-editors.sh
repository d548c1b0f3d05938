#!/usr/bin/env bash
# Installs the real editors the end-to-end tests in test/editors/ drive (Neovim 0.7, Emacs 30 with
# built-in eglot + lsp-mode, Vim + ALE), the zstd CLI the store fixtures need and clang-14/lld-14
# (the line skim's WebAssembly check), on Debian 12
# (bookworm). Idempotent and non-interactive: safe to run again; does nothing when all is present.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# Run as root in CI; elsewhere fall back to sudo.
SUDO=''
if [ "$(id -u)" -ne 0 ]; then SUDO='sudo'; fi

# Everything the tests need, by the command that proves it is there (dpkg names below).
have_all() {
  command -v nvim >/dev/null && command -v emacs >/dev/null && command -v vim >/dev/null &&
    command -v zstd >/dev/null && command -v script >/dev/null && command -v chromium >/dev/null &&
    command -v clang-14 >/dev/null && command -v wasm-ld-14 >/dev/null &&
    dpkg -s libkrb5-dev >/dev/null 2>&1 &&
    [ -d /usr/share/vim/vimfiles/pack/dist-bundle/opt/ale ] &&
    emacs --batch --eval '(progn (require (quote eglot)) (require (quote lsp-mode)))' >/dev/null 2>&1 &&
    emacs --batch --eval '(unless (>= emacs-major-version 30) (kill-emacs 1))' >/dev/null 2>&1
}
if have_all; then
  echo "install-editors: neovim, emacs 30 (eglot, lsp-mode), vim + ale and zstd are already installed"
  exit 0
fi

apt_install() { $SUDO apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold "$@"; }

# Emacs 30 (eglot built in) and a matching lsp-mode only exist in bookworm-backports.
BACKPORTS=/etc/apt/sources.list.d/bookworm-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  $SUDO tee "$BACKPORTS" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
$SUDO apt-get update -q

# bsdutils provides `script`, which gives headless Vim the tty-like stdin it needs.
# chromium drives code-server's web UI (test/editors/vscode.test.ts); libkrb5-dev lets code-server's
# postinstall build kerberos (its prebuilt download is unreachable here).
apt_install zstd bsdutils neovim vim vim-ale chromium libkrb5-dev
# clang-14 and lld-14 (wasm-ld) rebuild the line skim's WebAssembly from server/wasm/lineSkim.c, so
# lineSkimWasm.test.ts can check the committed module is what the source builds.
apt_install clang-14 lld-14
# -t bookworm-backports for both: without it, elpa-lsp-mode's dh-elpa-helper would make apt remove
# emacs-nox 30 (real-lsp-clients.md, Setup notes). Never elpa-eglot next to Emacs 30 (Breaks).
apt_install -t bookworm-backports emacs-nox elpa-lsp-mode

have_all || { echo "install-editors: installation incomplete" >&2; exit 1; }
echo "install-editors: done ($(nvim --version | head -n1); $(emacs --version | head -n1); $(vim --version | head -n1))"
