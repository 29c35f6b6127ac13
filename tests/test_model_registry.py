"""Providers of the model under test registered by decorator (:mod:`pingce.predict.registry`, as
inspect_ai's ``@modelapi``): one registration drives ``--model``'s name grammar, its error
message, its help and metavar, and which client asks the model."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from pingce.errors import OptionError
from pingce.predict.client import ChatModel
from pingce.predict.registry import (
    ModelClient,
    model_grammar,
    model_help,
    model_metavar,
    modelapi,
    parse_model,
    parse_model_name,
    provider_entries,
    unregister,
)

OPENAI_ERROR = (
    "--model 'gpt-4o': expected openai:NAME (a model at an OpenAI-compatible endpoint, e.g. "
    "openai:qwen2.5-7b-instruct with --base-url http://localhost:8000/v1)"
)


def test_openai_is_the_builtin_provider() -> None:
    assert [entry.name for entry in provider_entries()] == ["openai"]
    name = parse_model("openai: qwen2.5-7b-instruct ")
    assert (name.provider, name.model) == ("openai", "qwen2.5-7b-instruct")
    assert name.entry.load() is ChatModel
    assert parse_model_name("openai:m") == "m"
    assert model_metavar() == "openai:NAME"
    for wrong in ("gpt-4o", "openai:", "openai: ", "other:m"):
        with pytest.raises(OptionError, match="expected openai:NAME"):
            parse_model(wrong)
    with pytest.raises(OptionError) as info:
        parse_model("gpt-4o")
    assert str(info.value) == OPENAI_ERROR  # the message of before the registry


@pytest.fixture
def local() -> Iterator[None]:
    @modelapi("local", describe="a model of the test's own", example="local:tiny")
    def _local() -> Callable[..., ModelClient]:
        return ChatModel

    yield
    unregister("local")


def test_a_registered_provider_drives_the_grammar_the_message_and_the_help(local: None) -> None:
    assert parse_model("local:tiny").provider == "local"
    assert model_metavar() == "openai:NAME|local:NAME"
    assert model_grammar().endswith(" or local:NAME (a model of the test's own, e.g. local:tiny)")
    with pytest.raises(OptionError, match=r"expected openai:NAME .* or local:NAME"):
        parse_model("nobody:m")
    assert "local:NAME: a model of the test's own" in model_help()
    with pytest.raises(ValueError, match="registered already"):
        modelapi("local", describe="", example="")(lambda: ChatModel)
    with pytest.raises(ValueError, match="without a colon"):
        modelapi("a:b", describe="", example="")
    unregister("local")
    with pytest.raises(OptionError):
        parse_model("local:tiny")
