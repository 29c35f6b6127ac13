"""What a record sends to the model: its messages. Its tools, as OpenAI tools, are built by
:func:`pingce.remote.toolcalls.openai_tools` (the one module of the tool-call wire formats,
which also reads the calls of the answer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["messages_of"]


def messages_of(value: Any, system: str | None = None) -> list[dict[str, Any]]:
    """Chat messages from a record's prompt: text (one user message), a list of messages
    ``{"role", "content"}``, or BFCL's question, a list of turns each a list of messages (one
    turn only: a later turn needs the model's answer to the earlier one, which a single request
    cannot hold). ``system`` is put first unless the messages have a system message. Raises
    ``ValueError`` saying what is wrong."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("the prompt is empty text")
        messages: list[Any] = [{"role": "user", "content": value}]
    elif isinstance(value, list):
        if value and all(isinstance(turn, list) for turn in value):
            turns = [turn for turn in value if turn]
            if len(turns) > 1:
                raise ValueError(
                    f"a question of {len(turns)} turns: a later turn needs the model's answer to "
                    "the earlier ones (multi-turn runs are not supported); give one turn"
                )
            messages = turns[0] if turns else []
        else:
            messages = value
        if not messages:
            raise ValueError("the prompt is an empty list of messages")
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping):
                raise ValueError(f"message {i} is not an object")
            if not isinstance(message.get("role"), str):
                raise ValueError(f'message {i} has no "role" (a string)')
            if "content" not in message and "tool_calls" not in message:
                raise ValueError(f'message {i} has no "content"')
        messages = [dict(m) for m in messages]
    else:
        raise ValueError(f"expected text or a list of messages, got {type(value).__name__}")
    if system and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system})
    return messages
