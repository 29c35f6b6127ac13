#!/bin/sh
# Real BFCL score files for pingce's tests: the first 40 simple_python entries of two real
# result files (Claude Sonnet 4.5 FC and DeepSeek V3.1 Terminus FC, uploaded to gorilla PR #1205),
# each scored by BFCL's own checker (bfcl-eval 2026.3.23, `bfcl evaluate --partial-eval`),
# offline (the package ships its data). Both are scored under one model name in BFCL's mapping.
set -e
# Run from this folder (src/pingce/examples/other_tools/bfcl). BFCL_VENV: a venv with bfcl-eval and its
# dependencies (src/pingce/examples/other_tools/README.md); /tmp/bfclfx: the two result files of PR #1205
# (git fetch origin refs/pull/1205/head in a gorilla clone; commit 0b121ef5).
B=${BFCL_VENV:-/tmp/bfclvenv}/bin
M=claude-sonnet-4-5-20250929-FC
for side in claude deepseek; do
  root=$(mktemp -d)
  mkdir -p $root/result/$M
  src=$([ $side = claude ] && echo /tmp/bfclfx/cl_result.json || echo /tmp/bfclfx/ds_result.json)
  head -40 $src | python3 -c "
import json,sys
for line in sys.stdin:
    r=json.loads(line); print(json.dumps({'id':r['id'],'result':r['result']},ensure_ascii=False))
" > $root/result/$M/BFCL_v4_simple_python_result.json
  BFCL_PROJECT_ROOT=$root $B/bfcl evaluate --model $M --test-category simple_python --partial-eval >/dev/null
  mkdir -p $side/result/$M $side/score/$M/non_live
  cp $root/result/$M/BFCL_v4_simple_python_result.json $side/result/$M/
  cp $root/score/$M/non_live/BFCL_v4_simple_python_score.json $side/score/$M/non_live/
  rm -rf $root
done
