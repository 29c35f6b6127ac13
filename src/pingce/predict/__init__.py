"""Running the model under test (``--model``): requests built from records, OpenAI tools from
BFCL function docs, and a client that asks an OpenAI-compatible ``/v1/chat/completions``
endpoint through the judge's machinery (one concurrency limit, retries with Retry-After, an
SQLite cache of answers, tokens, cost and latency)."""

from __future__ import annotations

from ..remote.toolcalls import openai_tools, restore_names
from .cache import AnswerCache
from .client import Answer, ChatModel, parse_model_name
from .requests import messages_of

__all__ = [
    "Answer",
    "AnswerCache",
    "ChatModel",
    "messages_of",
    "openai_tools",
    "parse_model_name",
    "restore_names",
]
