"""Real Inspect AI logs for the tests, made by ``inspect_ai`` itself: a 12-sample question task
answered by Inspect's offline mock model (``mockllm/model``, each sample's answer fixed by its
id and epoch), scored by Inspect's ``match()`` and ``includes()``, a scorer of our own giving
``C``/``P``/``I`` (exact, contained, wrong) and one giving a number."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path
from typing import Any

SAMPLES: list[tuple[str, str, Any, dict[str, Any]]] = [
    ("q01", "What is the capital of France? One word.", "Paris", {"lang": "en", "level": 1}),
    ("q02", "What is 2 + 2? Answer with a number.", ["4", "four"], {"lang": "en", "level": 1}),
    ("q03", "Which planet is known as the Red Planet?", "Mars", {"lang": "en", "level": 1}),
    ("q04", "What is the chemical symbol for gold?", "Au", {"lang": "en", "level": 2}),
    ("q05", "Who wrote Hamlet? Give the surname.", "Shakespeare", {"lang": "en", "level": 2}),
    ("q06", "What is 12 * 12?", "144", {"lang": "en", "level": 2}),
    ("q07", "中国的首都是哪座城市？", "北京", {"lang": "zh", "level": 1}),
    ("q08", "一年有几个月？请用阿拉伯数字回答。", "12", {"lang": "zh", "level": 1}),
    ("q09", "水的化学式是什么？", "H2O", {"lang": "zh", "level": 2}),
    ("q10", "《红楼梦》的作者是谁？", "曹雪芹", {"lang": "zh", "level": 3}),
    ("q11", "光在真空中的速度约为每秒多少公里？", "300000", {"lang": "zh", "level": 3}),
    ("q12", "What is the square root of 81?", "9", {"lang": "en", "level": 3}),
]

# each sample's answer: one text for every epoch, or one an epoch
BASELINE: dict[str, Any] = {
    "q01": "Paris",
    "q02": "4",
    "q03": ("Mars", "Mars", "Jupiter"),
    "q04": "The symbol is Au",
    "q05": "Dickens",
    "q06": ("144", "154", "144"),
    "q07": "北京",
    "q08": "12个月",
    "q09": "H2O",
    "q10": "鲁迅",
    "q11": ("约300000公里", "300000", "30万"),
    "q12": "",
}
CANDIDATE: dict[str, Any] = {
    "q01": "Paris",
    "q02": "four",
    "q03": "Mars",
    "q04": "Au",
    "q05": ("Shakespeare", "Shakespeare", "Marlowe"),
    "q06": "144",
    "q07": "上海",
    "q08": "12",
    "q09": ("H2O", "H2O2", "H2O"),
    "q10": "曹雪芹",
    "q11": "300000",
    "q12": "The square root of 81 is 9",
}


def make_log(
    folder: Path,
    answers: dict[str, Any],
    *,
    epochs: int = 3,
    reducer: str = "mean",
    log_format: str = "eval",
) -> Path:
    """Run the task with the mock model and return the log Inspect wrote."""
    from inspect_ai import Epochs, Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        PARTIAL,
        Score,
        Target,
        accuracy,
        includes,
        match,
        mean,
        scorer,
        stderr,
    )
    from inspect_ai.solver import TaskState, generate
    from inspect_ai.solver._task_state import sample_state

    @scorer(metrics=[accuracy(), stderr()])
    def exact_partial() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            out = state.output.completion.strip().casefold()
            targets = [t.strip().casefold() for t in target.target]
            if out in targets:
                value = CORRECT
            elif any(t in out for t in targets):
                value = PARTIAL
            else:
                value = INCORRECT
            return Score(value=value, answer=state.output.completion)

        return score

    @scorer(metrics=[mean(), stderr()])
    def char_overlap() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            left = list(state.output.completion.casefold())
            wanted = target.target[0].casefold()
            hit = 0
            for ch in wanted:
                if ch in left:
                    left.remove(ch)
                    hit += 1
            return Score(value=round(hit / len(wanted), 4), answer=state.output.completion)

        return score

    def answer(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        state = sample_state()
        assert state is not None
        text = answers[str(state.sample_id)]
        if isinstance(text, tuple):
            text = text[state.epoch - 1]
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        # usage given: mockllm would count tokens with tiktoken, which downloads its tables
        n_in = sum(len(m.text) for m in messages)
        out.usage = ModelUsage(
            input_tokens=n_in, output_tokens=len(text), total_tokens=n_in + len(text)
        )
        return out

    task = Task(
        dataset=[Sample(id=i, input=q, target=t, metadata=dict(m)) for i, q, t, m in SAMPLES],
        solver=[generate()],
        scorer=[match(), includes(), exact_partial(), char_overlap()],
        epochs=Epochs(epochs, reducer),
        name="qa",
    )
    model = get_model("mockllm/model", custom_outputs=answer)
    with warnings.catch_warnings():  # inspect_ai 0.3.285 calls tenacity with a deprecated name
        warnings.simplefilter("ignore", DeprecationWarning)
        [log] = inspect_eval(
            task,
            model=model,
            log_dir=str(folder),
            log_format=log_format,
            display="none",
            max_samples=1,
            max_connections=1,
        )
    assert log.status == "success", log.status
    gc.collect()  # Inspect's unclosed anyio streams warn when collected: here, not in a later test
    return Path(log.location)


def main(folder: str) -> None:
    """The example logs (examples/other_tools/inspect): ``python -m tests.inspect_logs
    src/pingce/examples/other_tools/inspect`` from the repository's root."""
    import shutil
    import tempfile

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name, answers in (("baseline", BASELINE), ("candidate", CANDIDATE)):
            made = make_log(Path(scratch) / name, answers)
            shutil.copy(made, out / f"{name}.eval")


if __name__ == "__main__":
    import sys

    main(sys.argv[1])
