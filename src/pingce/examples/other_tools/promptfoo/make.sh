#!/usr/bin/env bash
# Make the promptfoo fixture outputs from scratch, offline (npm registry only for the install).
#   results.json (what pingce reads), from promptfooconfig.yaml and mock_provider.js beside it
# Row content is deterministic (echo + a fixed mock provider, -j 1, --no-cache);
# evalId, timestamps, result ids (uuid) and latencies differ on each run.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE"
# npm on Node 20 resolves `promptfoo` to 0.121.20, the last release whose engines
# admit Node 20 (0.122.0+ need Node >= 22.22.0). Pin it for reproducibility.
PROMPTFOO_VERSION="${PROMPTFOO_VERSION:-0.121.20}"
if [ ! -x node_modules/.bin/promptfoo ]; then
  npm install --no-audit --no-fund "promptfoo@${PROMPTFOO_VERSION}"
fi
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1 \
       PROMPTFOO_DISABLE_REMOTE_GENERATION=1 PROMPTFOO_CONFIG_DIR="$HERE/.promptfoo-home" \
       NO_COLOR=1 FORCE_COLOR=0
rm -rf "$HERE/.promptfoo-home"
rc=0
npx --no-install promptfoo eval -c promptfooconfig.yaml -o results.json \
  --no-cache --no-progress-bar --no-table -j 1 || rc=$?
# promptfoo exits 100 when the pass rate is below 100% (PROMPTFOO_FAILED_TEST_EXIT_CODE)
if [ "$rc" -ne 0 ] && [ "$rc" -ne 100 ]; then echo "promptfoo eval failed: $rc" >&2; exit "$rc"; fi
rm -rf "$HERE/.promptfoo-home" node_modules package.json package-lock.json
ls -l results.json
