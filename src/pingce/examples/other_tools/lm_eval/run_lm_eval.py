"""`lm_eval` CLI with the pingce_mock model registered: python run_lm_eval.py run --model pingce_mock ..."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pingce_mock_lm  # noqa: E402,F401  (registers "pingce_mock")
from lm_eval.__main__ import cli_evaluate  # noqa: E402

if __name__ == "__main__":
    cli_evaluate()
