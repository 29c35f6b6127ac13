"""A stand-in judge for ``pingce demo``: an OpenAI-compatible chat server on loopback whose grades
come from a fixed rule, not from a model, so the judged examples run from a fresh clone with no
model, no key and no network.

Its numbers mean nothing about the answers: they show what a judged run does (the prompts, the
requests, the answer cache, each record's grade and the judge's reasoning, the bias diagnostics)
before a real judge is given with ``--judge openai:MODEL --base-url URL``. The rule, per task
(told by the prompt's fenced texts, :mod:`pingce.judged.prompts`):

- **rubric**: the word overlap (F1 of words; each Han character a word) of ``<output>`` with
  ``<reference>``, mapped onto the scale's points; with ``logprobs`` asked, the score token's
  alternatives give 0.7 to that point, 0.2 to the point below and 0.1 to the point above
  (renormalised at the scale's ends; G-Eval's weighted score differs from the stated one);
- **correctness**: ``C`` at an overlap of at least 0.6, ``P`` from 0.25, ``I`` below;
- **pairwise**: the answer with the larger overlap with ``<input>``; within 0.05 of each other,
  the answer shown first (a position bias on purpose, which ``position_bias`` measures).

:data:`LENIENT` grades the same way on the square root of the overlap: with both, a jury whose
agreement (``judge_agreement``) is high but not perfect.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..judged.scale import Scale

__all__ = ["LENIENT", "MODEL", "RULE", "grade_prompt", "overlap", "serving"]

MODEL = "stand-in-overlap"
"""The stand-in's model name (``--judge openai:stand-in-overlap``)."""
LENIENT = "stand-in-lenient"
"""A second stand-in for a jury: the same rule on the square root of the overlap (kinder to a
partial answer), so the jury's agreement is high but not perfect."""
RULE = "word overlap with the reference or question (a rule, not a model)"
"""What the stand-in grades by, in a sentence for the demo's output."""

_WORD = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)
_FENCE = re.compile(r"<(input|output|reference|output_a|output_b)>(.*?)</\1>", re.S)


def _words(text: str) -> Counter[str]:
    return Counter(w.lower() for w in _WORD.findall(text))


def overlap(answer: str, reference: str) -> float:
    """F1 of the two texts' words (counted with multiplicity); 0 when either has none."""
    a, b = _words(answer), _words(reference)
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def _texts(prompt: str) -> dict[str, str]:
    """The prompt's fenced texts, unescaped as :func:`~pingce.judged.prompts.render` escapes."""
    return {
        tag: text.replace("&lt;", "<").replace("&gt;", ">").strip()
        for tag, text in _FENCE.findall(prompt)
    }


def grade_prompt(
    prompt: str, scale: Scale, lenient: bool = False
) -> tuple[dict[str, Any], float | None]:
    """The stand-in's answer to one prompt (the JSON it writes) and, for a rubric score, the
    score whose token carries the alternatives (None otherwise); ``lenient``: :data:`LENIENT`'s."""
    texts = _texts(prompt)
    if "output_a" in texts:
        question = texts.get("input", "")
        first, second = (overlap(texts[k], question) for k in ("output_a", "output_b"))
        label = "A" if first >= second - 0.05 else "B"
        why = f"overlap with the question: A {first:.2f}, B {second:.2f}"
        return {"reasoning": why, "label": label}, None
    f1 = overlap(texts.get("output", ""), texts.get("reference", ""))
    f1 = math.sqrt(f1) if lenient else f1
    why = f"word overlap with the reference: {f1:.2f}"
    if '"C" | "P" | "I"' in prompt:
        label = "C" if f1 >= 0.6 else "P" if f1 >= 0.25 else "I"
        return {"reasoning": why, "label": label}, None
    if scale.kind == "points":
        points = sorted(scale.points)
        score = points[min(len(points) - 1, int(f1 * len(points)))]
        return {"reasoning": why, "score": int(score)}, score
    if scale.kind == "continuous":
        score = round(scale.low + f1 * (scale.high - scale.low), 2)
        return {"reasoning": why, "score": score}, None
    labels = list(scale.labels)
    return {"reasoning": why, "label": labels[min(len(labels) - 1, int(f1 * len(labels)))]}, None


def _logprobs(content: str, score: float, scale: Scale) -> dict[str, Any]:
    """Token log probabilities of ``content``: the score's token with its alternatives (0.7 to
    the score, 0.2 to the point below, 0.1 to the point above, renormalised), the rest as one
    token each side."""
    digits = str(int(score))
    at = content.rindex(f'"score": {digits}') + len('"score": ')
    points = sorted(scale.points)
    i = points.index(score)
    weights = {score: 0.7}
    if i > 0:
        weights[points[i - 1]] = 0.2
    if i + 1 < len(points):
        weights[points[i + 1]] = 0.1
    total = sum(weights.values())
    top = [
        {"token": str(int(p)), "logprob": math.log(w / total)}
        for p, w in sorted(weights.items(), key=lambda kv: -kv[1])
    ]
    tokens = [{"token": content[:at], "logprob": 0.0, "top_logprobs": []}]
    tokens.append({"token": digits, "logprob": top[0]["logprob"], "top_logprobs": top})
    tokens.append({"token": content[at + len(digits) :], "logprob": 0.0, "top_logprobs": []})
    return {"content": tokens}


def _answer(body: dict[str, Any], scale: Scale) -> dict[str, Any]:
    messages = body.get("messages") or []
    prompt = str(messages[-1].get("content", "")) if messages else ""
    answer, score = grade_prompt(prompt, scale, lenient=body.get("model") == LENIENT)
    content = json.dumps(answer, ensure_ascii=False)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
    }
    if body.get("logprobs") and score is not None:
        choice["logprobs"] = _logprobs(content, score, scale)
    words = len(prompt) // 4
    return {
        "id": "stand-in",
        "object": "chat.completion",
        "model": str(body.get("model", MODEL)),
        "choices": [choice],
        "usage": {"prompt_tokens": words, "completion_tokens": len(content) // 4},
    }


def _handler(scale: Scale) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    raise ValueError(f"no such endpoint: {self.path}")
                payload, status = _answer(body, scale), 200
            except (ValueError, TypeError, AttributeError) as exc:
                payload, status = {"error": {"message": str(exc)}}, 400
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the demo prints its own progress."""

    return Handler


@contextmanager
def serving(scale: Scale) -> Iterator[str]:
    """The stand-in on a free loopback port while the block runs; yields its base URL
    (``http://127.0.0.1:PORT/v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(scale))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="pingce-stand-in", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
