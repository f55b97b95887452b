#!/usr/bin/env bash
# One entry point for people and CI: set up (idempotent, fast when nothing changed: the
# packages, and the fast tier's model in the user's cache folder), then
#   app   launch the dashboard on the bundled sample repos
#   test  run the whole test suite (unit, AppTest, real browser)
#   setup only set up
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PY="$VENV/bin/python"
STAMP="$VENV/.nexus-installed"

setup_python() {
  if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
  fi
  # Reinstall only when the dependency list changed.
  want=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
    "$PY" -m pip install --quiet --upgrade pip
    # The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
    "$PY" -m pip install --quiet "torch==2.13.0"
    # ray: the Ray engine's tests run in local mode (tests/runtime/test_ray_engine.py).
    "$PY" -m pip install --quiet -e ".[dev,ray]"
    echo "$want" > "$STAMP"
  fi
}

setup_models() {
  # The fast tier's model (nexus mcp's default), distilled once into the user's cache
  # folder (a few minutes the first time, nothing after): no first answer waits for it.
  "$PY" -m nexus.cli setup
}

setup_browser() {
  # Debian's Chromium for the browser tests; Playwright drives it (never `playwright install`).
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
  fi
}

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

case "${1:-}" in
  setup)
    setup_python
    setup_models
    ;;
  app)
    setup_python
    setup_models
    # No file watcher: it followed the whole checkout (.venv, caches, what builds write) and
    # an idle server used a core (bench/dashboard/idle_cpu.py). To rerun on save while editing, add
    # --server.fileWatcherType auto (the last of a flag wins).
    exec "$VENV/bin/streamlit" run app.py --server.headless true --server.fileWatcherType none "${@:2}"
    ;;
  test)
    setup_python
    setup_models
    setup_browser
    exec "$PY" -m pytest "${@:2}"
    ;;
  *)
    echo "usage: scripts/dev.sh app|test|setup [extra args]" >&2
    exit 2
    ;;
esac
