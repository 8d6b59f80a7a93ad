#!/usr/bin/env bash
# Install AttnLab into ./.venv; as root, also the system packages it uses
# (bubblewrap for the grading sandbox, chromium for the browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=""
  command -v bwrap >/dev/null || missing="$missing bubblewrap"
  command -v chromium >/dev/null || missing="$missing chromium"
  if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq $missing >/dev/null || { apt-get update -qq && apt-get install -y -qq $missing >/dev/null; }
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q -e '.[dev]'
# formgrader reads the gradebook as it is now, not as it was when it first loaded a row
# (autograder/nbgrader_plugins.py): every Jupyter server of this environment loads the extension
mkdir -p .venv/etc/jupyter/jupyter_server_config.d
echo '{"ServerApp": {"jpserver_extensions": {"autograder.nbgrader_plugins": true}}}' \
  > .venv/etc/jupyter/jupyter_server_config.d/attnlab.json
# pip compiles what it installs, but not an editable project: compile it here, so that a
# Python that does not write bytecode (PYTHONDONTWRITEBYTECODE) does not compile it at each start
.venv/bin/python -m compileall -q autograder >/dev/null
