#!/usr/bin/env bash
# Make the lm-evaluation-harness fixture outputs from scratch, offline (PyPI only for the install).
#   mock/{results_<ts>.json, samples_pingce_qa_gen_<ts>.jsonl, samples_pingce_mc_<ts>.jsonl}
#   dummy/{results_<ts>.json, samples_pingce_qa_gen_<ts>.jsonl, samples_pingce_mc_<ts>.jsonl}
# pingce_mock (pingce_mock_lm.py) gives fixed answers; dummy answers "lol" to every
# generation and random (seeded: --seed 0) loglikelihoods. File names carry a timestamp.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/tmp/venv-lmeval}"
if [ ! -x "$VENV/bin/python" ]; then
  python3.11 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  # torch is optional for lm_eval 0.4.13 with these models (only pretty_env_info uses it);
  # WITH_TORCH=1 adds the CPU build that lies in /opt/wheels on this machine.
  if [ "${WITH_TORCH:-0}" = 1 ]; then "$VENV/bin/pip" install -q torch==2.13.0; fi
  "$VENV/bin/pip" install -q -r "$HERE/requirements-lock.txt"
fi
"$VENV/bin/python" -c "import importlib.metadata as m; print('lm_eval', m.version('lm_eval'))"
export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME="$HERE/.hf-home" \
       TOKENIZERS_PARALLELISM=false
cd "$HERE"   # the task YAMLs name data/*.jsonl relative to here
rm -rf out "$HF_HOME"
COMMON=(--tasks pingce_qa_gen pingce_mc --include_path tasks --log_samples --output_path out --seed 0)
"$VENV/bin/python" run_lm_eval.py run --model pingce_mock --model_args pretrained=pingce-mock-v1 "${COMMON[@]}"
"$VENV/bin/lm_eval" run --model dummy --model_args pretrained=dummy "${COMMON[@]}"
rm -rf "$HF_HOME"
# the example folders: the mock model's run and the dummy's
rm -rf mock dummy && mv out/pingce-mock-v1 mock && mv out/dummy dummy && rm -rf out
find mock dummy -type f | sort
