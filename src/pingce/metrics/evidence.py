"""Evidence metrics (the contract-review protocol, §1.3-1.4; docs/suites/contract-risk.md): is a
cited clause in the record's source document, are its details unchanged, does a cited law
article exist, and did the whole task succeed.

Record fields (names set by the suite's ``inputs``): ``contract`` (the source text),
``evidence`` (a list of ``{"clause"?: str, "law"?: str}``; other keys are kept out of the way),
and the gold and predicted levels.

* A cited clause is checked in two stages, as the reference's BGE-M3 + reranker: its ``top_k``
  closest sentences or windows of up to ``window`` adjacent sentences of its own record are
  found by character-bigram retrieval (:mod:`pingce.grounding.retrieval`, no all-pairs loop);
  those candidates are scored by the run's similarity backend (``--similarity``: lexical,
  embedding, reranker or LLM judge). The clause is grounded when its best score is above
  ``threshold`` (seed: 0.3); a clause found verbatim in the contract (after width, case and
  white-space normalisation, end punctuation ignored) is grounded without a model call.
* ``check_details``: a grounded clause whose numbers, parties, negation or modality contradict
  its best sentence (:mod:`pingce.grounding.details`) is *altered*: counted as hallucinated and,
  apart, in ``altered_clause_rate``. Off gives the reference's numbers exactly.
* A cited law must parse as law + article and exist in the law list
  (:mod:`pingce.grounding.laws`; ``laws``: ``builtin`` and/or files). Records whose gold level
  is in ``skip_law_check`` (the reference: 低) are not checked; their law citations still count as
  evidence in ``hallucination_rate`` (the reference's 总证据数).

Per record ``[clauses, clause_hallucinated, clause_altered, laws_checked, law_hallucinated,
law_malformed, laws_skipped, task_success, records, failed]``. A record with a failed similarity
call is left out (never scored 0) and says so, of the metrics that read its clauses:
``law_hallucination_rate`` reads the law citations alone (:class:`LawStatistic`, no similarity)
and keeps every record.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np

from .._constraints import Range
from ..labels import RISK_LEVELS, LabelScale
from ..records import FieldSpec, Table
from ..similarity.base import Pair, SimilarityTable
from ..text.sentences import join_sentences, split_sentences
from ._policy import ZeroDivision, safe_divide
from .protocol import LEFT_OUT, Context, Metric, StatBlock, Statistic
from .registry import register_metric

if TYPE_CHECKING:
    from ..grounding.laws import LawBook
    from ..grounding.retrieval import Candidates

__all__ = [
    "EvidenceItem",
    "EvidenceMetric",
    "EvidenceStatistic",
    "LawStatistic",
    "TaskSuccessRate",
    "parse_evidence",
]

WIDTH = 10
(
    CLAUSES,
    CLAUSE_HALLUCINATED,
    CLAUSE_ALTERED,
    LAWS,
    LAW_HALLUCINATED,
    LAW_MALFORMED,
    LAWS_SKIPPED,
    TASK_SUCCESS,
    RECORDS,
    FAILED,
) = range(WIDTH)


@dataclass(frozen=True)
class EvidenceItem:
    """One cited piece of evidence: a clause of the source, a law article, or both."""

    clause: str | None = None
    law: str | None = None


def parse_evidence(value: Any) -> tuple[EvidenceItem, ...]:
    """A list of ``{"clause"?: str, "law"?: str}`` objects (other keys ignored). Else
    ValueError saying which item is wrong and why. JSON text of such a list is read too."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("expected a list of evidence objects {clause?, law?}") from None
    if not isinstance(value, list):
        raise ValueError("expected a list of evidence objects {clause?, law?}")
    items = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"item {i} is not an object {{clause?, law?}}")
        clause, law = item.get("clause"), item.get("law")
        for name, text in (("clause", clause), ("law", law)):
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise ValueError(f"item {i}: {name} must be non-empty text, got {text!r}")
        if clause is None and law is None:
            raise ValueError(f"item {i} has neither a clause nor a law")
        items.append(EvidenceItem(clause, law))
    return tuple(items)


_EDGE_MARKS = "。！？；，、,.!?;:：\"'“”‘’「」『』《》()（） \t"


_FULL_WIDTH = {chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)} | {"\u3000": " "}
_FULL_WIDTH_FORM = re.compile("[\uff01-\uff5e\u3000]")


def _plain(text: str) -> str:
    """Width-, case- and space-normalised text for verbatim matching (NFKC; full-width ASCII
    forms, the common case, are mapped first so that most texts skip the slow path)."""
    text = _FULL_WIDTH_FORM.sub(lambda m: _FULL_WIDTH[m.group()], text)  # 4x str.translate
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return "".join(text.casefold().split())


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class _Retrieval:
    """The sentences of every record and each clause's candidates (made once per table)."""

    sentences: list[str]
    clauses: list[str]
    clause_record: np.ndarray
    verbatim: np.ndarray
    candidates: Candidates | None
    texts: dict[tuple[int, int], str] = field(default_factory=dict)

    def text(self, first: int, length: int) -> str:
        key = (first, length)
        found = self.texts.get(key)
        if found is None:
            found = join_sentences(self.sentences[first : first + length])
            self.texts[key] = found
        return found


class _LawCheck(Statistic):
    """What the statistics of cited evidence share: the law list and the check of every law
    citation into the rows (:class:`EvidenceStatistic`, :class:`LawStatistic`)."""

    def __init__(
        self,
        evidence: str,
        gold: str,
        scale: LabelScale,
        laws: tuple[str, ...],
        skip_law_check: tuple[str, ...],
    ):
        self.evidence, self.gold, self.scale = evidence, gold, scale
        self.laws = laws
        self.skip_law_check = skip_law_check
        self._book: LawBook | None = None

    def column_names(self, width: int) -> list[str]:
        return ["clauses", "clause_hallucinated", "clause_altered", "laws_checked",
                "law_hallucinated", "law_malformed", "laws_skipped", "task_success", "records",
                "failed"]  # fmt: skip

    def _evidence_spec(self) -> FieldSpec:
        return FieldSpec(
            self.evidence,
            "json",
            required=False,
            parser=parse_evidence,
            what="a list of evidence objects {clause?, law?}",
        )

    def book(self) -> LawBook:
        """The law list (loaded once; a missing or malformed file is an input error)."""
        if self._book is None:
            from ..grounding.laws import LawBook

            self._book = LawBook.from_sources(list(self.laws))
        return self._book

    def _laws(self, table: Table, rows: np.ndarray) -> dict[int, list[str]]:
        """Check every law citation (into ``rows``); the notes of the records that have some."""
        notes: dict[int, list[str]] = defaultdict(list)
        evidence, gold = table.column(self.evidence), table.column(self.gold)
        skip = {self.scale.code(level) for level in self.skip_law_check}
        book: LawBook | None = None
        for i in range(table.n):
            items = evidence[i]
            if not items:
                continue
            cited = [e.law for e in items if e.law is not None]
            if not cited:
                continue
            if int(gold[i]) in skip:
                rows[i, LAWS_SKIPPED] += len(cited)
                continue
            book = book or self.book()
            for law in cited:
                rows[i, LAWS] += 1
                verdict = book.check(law)
                if verdict.status == "ok":
                    continue
                rows[i, LAW_HALLUCINATED] += 1
                if verdict.status == "malformed":
                    rows[i, LAW_MALFORMED] += 1
                notes[i].append(f"law {_short(law)!r}: {verdict.reason}")
        return notes


class EvidenceStatistic(_LawCheck):
    """Per record the evidence counts (see the module docstring); reasons ``clause``,
    ``altered``, ``law``, ``evidence`` (clauses and laws) and ``task``."""

    def __init__(
        self,
        contract: str,
        evidence: str,
        gold: str,
        pred: str,
        scale: LabelScale,
        threshold: float,
        top_k: int,
        window: int,
        check_details: bool,
        laws: tuple[str, ...],
        skip_law_check: tuple[str, ...],
    ):
        super().__init__(evidence, gold, scale, laws, skip_law_check)
        self.contract, self.pred = contract, pred
        self.threshold, self.top_k, self.window = threshold, top_k, window
        self.check_details = check_details
        self.needs_similarity = True

    @property
    def key(self) -> Hashable:
        return (
            "evidence",
            self.contract,
            self.evidence,
            self.gold,
            self.pred,
            self.scale.labels,
            self.threshold,
            self.top_k,
            self.window,
            self.check_details,
            self.laws,
            self.skip_law_check,
        )

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.contract, "string", required=False),
            self._evidence_spec(),
            FieldSpec(self.gold, "label", scale=self.scale),
            # a prediction off the scale is a wrong level (code k), not an input error
            FieldSpec(self.pred, "label", scale=self.scale, lenient=True),
        ]

    def check(self, table: Table) -> None:
        contracts, evidence = table.column(self.contract), table.column(self.evidence)
        for i in range(table.n):
            items = evidence[i]
            if items and contracts[i] is None and any(e.clause is not None for e in items):
                need = "a cited clause needs the record's contract to be checked against"
                raise table.missing(i, self.contract, need)
        if any(e.law is not None for items in evidence if items for e in items):
            self.book()

    def _retrieval(self, table: Table) -> _Retrieval:
        return table.derived(self.key, lambda: self._retrieve(table))  # type: ignore[no-any-return]

    def _retrieve(self, table: Table) -> _Retrieval:
        from ..grounding.retrieval import top_candidates

        contracts, evidence = table.column(self.contract), table.column(self.evidence)
        sentences: list[str] = []
        sentence_record: list[int] = []
        clauses: list[str] = []
        clause_record: list[int] = []
        verbatim: list[bool] = []
        for i in range(table.n):
            items = evidence[i]
            if not items or contracts[i] is None:
                continue
            cited = [e.clause for e in items if e.clause is not None]
            if not cited:
                continue
            own = split_sentences(contracts[i])
            sentences += own
            sentence_record += [i] * len(own)
            plain_contract = _plain(contracts[i])
            for clause in cited:
                clauses.append(clause)
                clause_record.append(i)
                core = _plain(clause).strip(_EDGE_MARKS)
                verbatim.append(bool(core) and core in plain_contract)
        records = np.asarray(clause_record, dtype=np.int64)
        candidates = (
            top_candidates(
                sentences,
                np.asarray(sentence_record, dtype=np.int64),
                clauses,
                records,
                k=self.top_k,
                window=self.window,
            )
            if sentences
            else None
        )
        return _Retrieval(sentences, clauses, records, np.asarray(verbatim, bool), candidates)

    def pairs(self, table: Table) -> Iterable[Pair]:
        return (pair for _, pair in self.indexed_pairs(table))

    def indexed_pairs(self, table: Table) -> Iterable[tuple[int, Pair]]:
        found = self._retrieval(table)
        if found.candidates is None:
            return
        first, length = found.candidates.first, found.candidates.length
        records = found.clause_record.tolist()
        for c, clause in enumerate(found.clauses):
            if found.verbatim[c]:
                continue
            for j in range(first.shape[1]):
                if first[c, j] >= 0:
                    yield records[c], (clause, found.text(int(first[c, j]), int(length[c, j])))

    def _closest(
        self, found: _Retrieval, c: int, clause: str, similarity: SimilarityTable | None
    ) -> tuple[str, float, int, list[str]]:
        """Clause ``c``'s closest candidate sentence and its score (-1 and ``""`` when it has
        none), the pairs whose similarity failed, and the sentences above the threshold."""
        best_text, best, failed = "", -1.0, 0
        above: list[str] = []
        candidates = found.candidates
        if candidates is None:
            return best_text, best, failed, above
        for j in range(candidates.first.shape[1]):
            start = int(candidates.first[c, j])
            if start < 0:
                continue
            assert similarity is not None, "the engine scored no pairs"
            text = found.text(start, int(candidates.length[c, j]))
            score = similarity.get(clause, text)
            if np.isnan(score):
                failed += 1
                continue
            if score > self.threshold:
                above.append(text)
            if score > best:
                best, best_text = score, text
        return best_text, best, failed, above

    def compute(self, table: Table, context: Context) -> StatBlock:
        from ..grounding.details import altered_details

        found = self._retrieval(table)
        rows = np.zeros((table.n, WIDTH))
        rows[:, RECORDS] = 1.0
        # notes only of the records that have some (a million records mostly have none)
        clause_notes: dict[int, list[str]] = defaultdict(list)
        altered_notes: dict[int, list[str]] = defaultdict(list)
        failed_pairs = np.zeros(table.n, dtype=np.int64)
        similarity = context.similarity  # None when no clause needed a score
        for c, clause in enumerate(found.clauses):
            i = int(found.clause_record[c])
            rows[i, CLAUSES] += 1
            if found.verbatim[c]:
                continue
            best_text, best, failed, above = self._closest(found, c, clause, similarity)
            if failed:
                failed_pairs[i] += failed
                continue
            if best <= self.threshold:
                rows[i, CLAUSE_HALLUCINATED] += 1
                closest = (
                    f"closest {_short(best_text)!r} scores {best:.3g} (≤ {self.threshold:g})"
                    if best_text
                    else "the contract has no sentence"
                )
                clause_notes[i].append(f"clause {_short(clause)!r} not in the contract: {closest}")
            elif self.check_details:
                # altered when it contradicts its best sentence and no other candidate above
                # the threshold is quoted without a contradiction (a contract may say one
                # thing twice, in different orders)
                altered = altered_details(clause, best_text)
                if altered and not any(
                    altered_details(clause, text) == [] for text in above if text != best_text
                ):
                    rows[i, CLAUSE_HALLUCINATED] += 1
                    rows[i, CLAUSE_ALTERED] += 1
                    note = (
                        f"clause {_short(clause)!r} altered: {'; '.join(altered)} (closest "
                        f"{_short(best_text)!r}, {best:.3g})"
                    )
                    clause_notes[i].append(note)
                    altered_notes[i].append(note)
        law_notes = self._laws(table, rows)
        gold, pred = table.column(self.gold), table.column(self.pred)
        correct = np.asarray(gold) == np.asarray(pred)
        clean = (rows[:, CLAUSE_HALLUCINATED] == 0) & (rows[:, LAW_HALLUCINATED] == 0)
        rows[:, TASK_SUCCESS] = correct & clean
        labels = self.scale.labels
        clause_reason = _joined(clause_notes, table.n)
        altered_reason = _joined(altered_notes, table.n)
        law_reason = _joined(law_notes, table.n)
        evidence_reason = np.empty(table.n, dtype=object)
        for i in sorted(set(clause_notes) | set(law_notes)):
            both = [t for t in (clause_reason[i], law_reason[i]) if t]
            evidence_reason[i] = "; ".join(both) or None
        # the task's reason: the level when it is wrong, then the evidence's
        task_reason = evidence_reason.copy()
        wrong = np.flatnonzero(~correct)
        k = len(labels)
        predicted = self.scale.names(np.arange(k + 1))  # the last: a prediction off the scale
        levels = np.array(
            [f"level: gold {labels[g]}, predicted {q}" for g in range(k) for q in predicted],
            dtype=object,
        )
        codes = np.asarray(gold)[wrong].astype(np.int64) * (k + 1) + np.asarray(pred)[wrong]
        task_reason[wrong] = levels[codes]
        for i in wrong[evidence_reason[wrong] != None].tolist():  # noqa: E711  (object array)
            task_reason[i] = f"{task_reason[i]}; {evidence_reason[i]}"
        left_out = np.empty(table.n, dtype=object)
        failed_records = int((failed_pairs > 0).sum())
        if failed_records:
            for r in np.flatnonzero(failed_pairs):
                rows[r] = 0.0
                rows[r, FAILED] = 1.0
                left_out[r] = (
                    f"similarity failed for {failed_pairs[r]} clause candidate(s): record left out"
                )
        reasons = {
            "clause": clause_reason,
            "altered": altered_reason,
            "law": law_reason,
            "evidence": evidence_reason,
            "task": task_reason,
        }
        if failed_records:
            reasons[LEFT_OUT] = left_out
        counts = {"similarity_failed_records": failed_records} if failed_records else {}
        return StatBlock(width=WIDTH, rows=rows, counts=counts, reasons=reasons)


class LawStatistic(_LawCheck):
    """The law citations of the evidence statistic alone (``law_hallucination_rate``): the
    columns ``laws_checked``, ``law_hallucinated``, ``law_malformed``, ``laws_skipped`` and
    ``records`` of the same layout, the others 0; reason ``law``.

    A law citation is checked against the law list, never by the similarity backend, so this
    statistic lists no pairs: a record whose clause candidates failed to score is left out of
    the metrics that read its clauses, and keeps its law citations here (a statistic's failure
    marks are those of the pairs its metrics' values depend on). It also counts the citations
    not checked (``failures.law_citations_not_checked``), once for the run."""

    @property
    def key(self) -> Hashable:
        return ("laws", self.evidence, self.gold, self.scale.labels, self.laws, self.skip_law_check)

    def fields(self) -> list[FieldSpec]:
        return [self._evidence_spec(), FieldSpec(self.gold, "label", scale=self.scale)]

    def check(self, table: Table) -> None:
        if any(e.law is not None for items in table.column(self.evidence) if items for e in items):
            self.book()

    def compute(self, table: Table, context: Context) -> StatBlock:
        rows = np.zeros((table.n, WIDTH))
        rows[:, RECORDS] = 1.0
        notes = self._laws(table, rows)
        skipped = int(rows[:, LAWS_SKIPPED].sum())
        counts = {"law_citations_not_checked": skipped} if skipped else {}
        reasons = {"law": _joined(notes, table.n)}
        return StatBlock(width=WIDTH, rows=rows, counts=counts, reasons=reasons)


def _joined(notes: dict[int, list[str]], n: int) -> np.ndarray:
    """A reason per record: its notes joined, None for a record without any."""
    out = np.empty(n, dtype=object)
    for i, texts in notes.items():
        if texts:
            out[i] = "; ".join(texts)
    return out


Kind = Literal["clause", "altered", "law", "all", "task"]

_UNDEFINED = {
    "clause": "no cited clauses",
    "altered": "no cited clauses",
    "law": "no law citations checked",
    "all": "no evidence cited",
    "task": "no records",
}


@dataclass(eq=False)
class EvidenceMetric(Metric):
    """A rate of the evidence statistic (see the module docstring); lower is better."""

    higher_is_better = False

    contract: str = "contract"
    evidence: str = "evidence"
    gold: str = "gold"
    pred: str = "pred"
    scale: LabelScale = RISK_LEVELS
    threshold: Annotated[float, Range(0, 1)] = 0.3
    top_k: Annotated[int, Range(1, 1_000)] = 5
    """Candidate sentences per cited clause (an array of records x top_k is kept)."""
    window: Annotated[int, Range(1, 50)] = 2
    check_details: bool = True
    laws: str | list[str] = "builtin"
    skip_law_check: list[str] = field(default_factory=list)
    zero_division: ZeroDivision = None
    kind: Kind = "clause"

    def __post_init__(self) -> None:
        super().__post_init__()
        laws = [self.laws] if isinstance(self.laws, str) else self.laws
        if not isinstance(laws, list) or not laws or not all(isinstance(x, str) for x in laws):
            raise ValueError(f"laws must be 'builtin', a file or a list of them, got {laws!r}")
        unknown = [level for level in self.skip_law_check if self.scale.code(level) is None]
        if unknown:
            raise ValueError(
                f"skip_law_check: {unknown} not on the label scale {list(self.scale.labels)}"
            )
        self.threshold = float(self.threshold)
        self.reason = {
            "clause": "clause",
            "altered": "altered",
            "law": "law",
            "all": "evidence",
            "task": "task",
        }[self.kind]

    def statistic(self) -> Statistic:
        """The evidence statistic; for ``law_hallucination_rate``, which reads no clause, the law
        citations alone (:class:`LawStatistic`): its value needs no similarity, so a failed
        clause score never leaves a record out of it."""
        laws = (self.laws,) if isinstance(self.laws, str) else tuple(self.laws)
        if self.kind == "law":
            return LawStatistic(
                self.evidence, self.gold, self.scale, laws, tuple(self.skip_law_check)
            )
        return EvidenceStatistic(
            self.contract,
            self.evidence,
            self.gold,
            self.pred,
            self.scale,
            self.threshold,
            self.top_k,
            self.window,
            self.check_details,
            laws,
            tuple(self.skip_law_check),
        )

    def _parts(self, summed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = np.asarray(summed, dtype=np.float64)
        if self.kind == "clause":
            return s[..., CLAUSE_HALLUCINATED], s[..., CLAUSES]
        if self.kind == "altered":
            return s[..., CLAUSE_ALTERED], s[..., CLAUSES]
        if self.kind == "law":
            return s[..., LAW_HALLUCINATED], s[..., LAWS]
        if self.kind == "all":
            hallucinated = s[..., CLAUSE_HALLUCINATED] + s[..., LAW_HALLUCINATED]
            return hallucinated, s[..., CLAUSES] + s[..., LAWS] + s[..., LAWS_SKIPPED]
        return s[..., TASK_SUCCESS], s[..., RECORDS]

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        numerator, denominator = self._parts(summed)
        return safe_divide(numerator, denominator, self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(self._parts(summed)[1])

    def undefined_reason(self, summed: np.ndarray) -> str:
        s = np.asarray(summed, dtype=np.float64)
        text = _UNDEFINED[self.kind]
        skipped = int(s[..., LAWS_SKIPPED].sum())
        if self.kind == "law" and skipped:
            text += f" ({skipped} not checked: gold level in {list(self.skip_law_check)})"
        failed = int(s[..., FAILED].sum())
        if failed:
            text += f"; {failed} record(s) left out after failed similarity calls"
        return text


_DEFINITIONS: Mapping[Kind, tuple[str, str]] = {
    "clause": (
        "clause_hallucination_rate",
        "hallucinated / cited clauses: best score of the top-k retrieved sentences ≤ threshold "
        "(0.3), or details altered.",
    ),
    "altered": (
        "altered_clause_rate",
        "cited clauses that match a sentence but change its numbers, parties, negation or "
        "modality / cited clauses.",
    ),
    "law": (
        "law_hallucination_rate",
        "law citations that are malformed or name an unknown law or article / law citations "
        "checked.",
    ),
    "all": (
        "hallucination_rate",
        "(clause + law hallucinations) / all cited clauses and laws.",
    ),
    "task": (
        "task_success_rate",
        "records with the level right AND no clause hallucination AND no law hallucination / "
        "records.",
    ),
}


@dataclass(eq=False)
class TaskSuccessRate(EvidenceMetric):
    """The share of records that succeeded as a whole; higher is better."""

    higher_is_better = True


for _kind, (_name, _text) in _DEFINITIONS.items():
    _class = TaskSuccessRate if _kind == "task" else EvidenceMetric
    register_metric(_name, definition=_text, kind=_kind)(_class)
