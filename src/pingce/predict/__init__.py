"""Running the model under test (``--model``): requests built from records, OpenAI tools from
BFCL function docs, and a client that asks an OpenAI-compatible ``/v1/chat/completions``
endpoint through the judge's machinery (one concurrency limit, retries with Retry-After, an
SQLite cache of answers, tokens, cost and latency). Providers are registered by name
(:func:`pingce.predict.registry.modelapi`).

Names are imported on first use, so reading the providers' names (``--model``'s help) imports no
HTTP library."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..remote.toolcalls import openai_tools, restore_names
    from .cache import AnswerCache
    from .client import Answer, ChatModel
    from .registry import ModelName, modelapi, parse_model, parse_model_name
    from .requests import messages_of

__all__ = [
    "Answer",
    "AnswerCache",
    "ChatModel",
    "ModelName",
    "messages_of",
    "modelapi",
    "openai_tools",
    "parse_model",
    "parse_model_name",
    "restore_names",
]

_LAZY = {
    "Answer": ".client",
    "AnswerCache": ".cache",
    "ChatModel": ".client",
    "ModelName": ".registry",
    "messages_of": ".requests",
    "modelapi": ".registry",
    "openai_tools": "..remote.toolcalls",
    "parse_model": ".registry",
    "parse_model_name": ".registry",
    "restore_names": "..remote.toolcalls",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
