#!/bin/sh
# Attach a headless Neovim to hrbench (LSP over stdio), score one output, stop cleanly.
# Exits 0 on success. HRBENCH_LSP_CMD='["hrb", "serve", "--stdio"]' (a JSON array) sets the server.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec nvim --headless -u NONE -i NONE -n -c "luafile $here/smoke.lua"
