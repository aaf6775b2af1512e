#!/usr/bin/env bash
# The play app in a real browser (make test-browser): Debian's Chromium from apt and Playwright
# from PyPI, driven at that Chromium (Playwright's own browser download is never run: it comes
# from a CDN). One Chromium for the whole run; it also refreshes docs/games/img/<game>.png.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
PIP_FLAGS=(--constraint constraints.txt)
[ -d /opt/wheels ] && PIP_FLAGS+=(--find-links /opt/wheels)
.venv/bin/python -m pip install --quiet "${PIP_FLAGS[@]}" "playwright>=1.45"
start=$(date +%s)
CARD_ENVS_PURE_PYTHON="${CARD_ENVS_PURE_PYTHON:-}" .venv/bin/python -m pytest -m browser -n 0 \
    -p no:cacheprovider tests/test_play_browser.py "$@"
echo "browser tests: $(( $(date +%s) - start )) s"
