"""The built-in providers of the model under test, registered by name
(:func:`pingce.predict.registry.modelapi`); each client is imported when a model of it is asked,
never when the names are read."""

from __future__ import annotations

from collections.abc import Callable

from .registry import ModelClient, modelapi

__all__: list[str] = []


@modelapi(
    "openai",
    describe="a model at an OpenAI-compatible endpoint",
    example="openai:qwen2.5-7b-instruct with --base-url http://localhost:8000/v1",
)
def _openai() -> Callable[..., ModelClient]:
    from .client import ChatModel

    return ChatModel
