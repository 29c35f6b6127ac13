"""Defects the fuzz harness (tests/test_fuzz.py) found beyond issue 28's list, each pinned by the
smallest input that showed it: a traceback, or an exit 0 with changed text or numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RATINGS = """name: ratings
inputs: {gold: human.rating, pred: model_rating}
id_field: item_id
labels: {values: [1, 2, 3, 4, 5]}
metrics: {accuracy: {}, qwk: {}}
"""


def run(tmp_path: Path, *args: str, cwd: Path | None = None) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    done = run_pingce("run", *args, "--out", str(out), "--bootstrap", "0", "--no-store", cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr + done.stdout, out  # notes are on standard output


def test_utf16_forced_on_a_file_without_a_byte_order_mark_names_the_byte_orders(
    tmp_path: Path,
) -> None:
    # was: UnicodeError "UTF-16 stream does not start with BOM", a traceback
    data = tmp_path / "a.jsonl"
    data.write_text('{"id":"j1","task":"judge","gold":true,"pred":"Yes"}\n', encoding="utf-16-le")
    code, stderr, out = run(
        tmp_path, "function-points", "--data", str(data), "--encoding", "utf-16"
    )
    assert code == 2 and not out.exists()
    assert f"{data}:1: cannot be read as utf-16" in stderr
    assert "--encoding utf-16-le or utf-16-be" in stderr
    code, _, out = run(tmp_path, "function-points", "--data", str(data), "--encoding", "utf-16-le")
    assert code == 0, _


def test_a_json_array_with_a_utf8_mark_and_a_bad_byte_names_line_and_offset(
    tmp_path: Path,
) -> None:
    # was: UnicodeDecodeError from json.loads, a traceback
    data = tmp_path / "b.json"
    data.write_bytes(
        b'\xef\xbb\xbf[{"id": "a", "gold_level": "\xe9\xab\x98", "pred_level": "\xe9\xab\x98"},\n'
        b'{"id": "b", "gold_level": "\xff\xe9\xab\x98", "pred_level": "\xe9\xab\x98"}]'
    )
    code, stderr, out = run(tmp_path, "contract-risk", "--data", str(data))
    assert code == 2 and not out.exists()
    offset = data.read_bytes().index(b"\xff")
    assert f"{data}:2: cannot be read as utf-8: byte 0xff at byte offset {offset}" in stderr


def test_records_jsonl_keeps_calls_as_written_when_an_argument_is_beyond_64_bits(
    tmp_path: Path,
) -> None:
    # was: the standard library's fallback wrote each call's private "_text" cache too
    data = tmp_path / "big.jsonl"
    call = {"name": "f", "arguments": {"x": 1}}
    big = {"name": "f", "arguments": {"x": -(2**64) - 1}}
    rows = [{"id": "a", "gold_fn": [call], "pred_fn": [call]},
            {"id": "b", "gold_fn": [call], "pred_fn": [big]}]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fields = ("--records-fields", "all")  # records.jsonl with the calls as read
    code, stderr, out = run(tmp_path, "function-call", "--data", str(data), *fields)
    assert code == 0, stderr
    written = [json.loads(line) for line in (out / "records.jsonl").read_text("utf-8").splitlines()]
    assert [w["fields"]["pred_fn"] for w in written] == [[call], [big]]
    assert [w["values"]["fn_acc_all"] for w in written] == [1.0, 0.0]


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_an_integer_beyond_64_bits_in_a_json_cell_stays_exact(tmp_path: Path, suffix: str) -> None:
    # was: read as a float, so 2**64 and 2**64 + 1 compared equal (fn_acc_all 1.0, exit 0)
    gold = json.dumps([{"name": "f", "arguments": {"room": 2**64 + 1}}])
    pred = json.dumps([{"name": "f", "arguments": {"room": 2**64}}])
    data = tmp_path / f"long.{suffix}"
    if suffix == "csv":
        import csv

        with open(data, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerows([["id", "gold_fn", "pred_fn"], ["q1", gold, pred]])
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"id": ["q1"], "gold_fn": [gold], "pred_fn": [pred]}), data)
    code, stderr, out = run(tmp_path, "function-call", "--data", str(data))
    assert code == 0, stderr
    result = json.loads((out / "results.json").read_text("utf-8"))
    assert result["metrics"]["fn_acc_all"]["value"] == 0.0
    assert str(2**64 + 1) in (out / "records.jsonl").read_text("utf-8")


@pytest.mark.parametrize(
    "table",
    [
        "item_id,human.rating,model_rating\nr1,5,4\nr2,3,3\n",  # flattened (json_normalize)
        'item_id,human,model_rating\nr1,"{""rating"": 5}",4\nr2,"{""rating"": 3}",3\n',  # JSON
    ],
    ids=["flattened-column", "json-cell"],
)
def test_a_field_inside_a_column_is_read_from_a_table(tmp_path: Path, table: str) -> None:
    # was: `gold: human.rating` could not be given in CSV at all ("required field is missing")
    suite = tmp_path / "ratings.yaml"
    suite.write_text(RATINGS, encoding="utf-8")
    data = tmp_path / "ratings.csv"
    data.write_text(table, encoding="utf-8")
    code, stderr, out = run(tmp_path, str(suite), "--data", str(data))
    assert code == 0, stderr
    result = json.loads((out / "results.json").read_text("utf-8"))
    assert result["metrics"]["accuracy"]["value"] == 0.5 and result["metrics"]["accuracy"]["n"] == 2


@pytest.mark.parametrize("name", ['""', "../../up", "a/b", ".hidden", "a b"])
def test_a_suite_name_that_is_not_a_plain_name_is_refused(tmp_path: Path, name: str) -> None:
    # was: run (exit 0), `../../up` writing to pingce-out/../../up-<time>
    suite = tmp_path / "s.yaml"
    suite.write_text(RATINGS.replace("name: ratings", f"name: {name}"), encoding="utf-8")
    data = tmp_path / "r.jsonl"
    data.write_text('{"item_id": "r1", "human": {"rating": 5}, "model_rating": 4}\n', "utf-8")
    done = run_pingce("run", str(suite), "--data", str(data), "--no-store", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{suite}:1: key 'name': a suite's name is a letter or digit" in done.stderr
    assert not (tmp_path / "pingce-out").exists() and not (tmp_path.parent / "up").exists()


@pytest.mark.parametrize("name", ["my-suite", "合同风险", "v1.2_eval"])
def test_plain_suite_names_run(tmp_path: Path, name: str) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(RATINGS.replace("name: ratings", f"name: {name}"), encoding="utf-8")
    data = tmp_path / "r.jsonl"
    data.write_text('{"item_id": "r1", "human": {"rating": 5}, "model_rating": 4}\n', "utf-8")
    code, stderr, _ = run(tmp_path, str(suite), "--data", str(data))
    assert code == 0, stderr


GB_ROWS = [
    ("seed-01", "打开客厅的灯", "客厅", "打开"),
    ("seed-02", "关闭卧室空调", "卧室", "关闭"),
    ("seed-03", "调节书房温度到二十二度", "书房", "调节"),
]


def _gb18030_csv() -> bytes:
    lines = ["id,query,gold_fn,pred_fn"]
    for key, query, room, action in GB_ROWS:
        call = json.dumps(
            [{"name": "light_control", "arguments": {"room": room, "action": action}}],
            ensure_ascii=False,
        ).replace('"', '""')
        lines.append(f'{key},{query},"{call}","{call}"')
    return ("\r\n".join(lines) + "\r\n").encode("gb18030")


@pytest.mark.parametrize("where", ["before a character", "inside a character", "in ASCII"])
def test_a_gb18030_file_with_a_bad_byte_is_an_error_not_a_cyrillic_page(
    tmp_path: Path, where: str
) -> None:
    # was: read as iso8859-5 or ptcp154 (charset-normalizer's best for the damaged bytes), every
    # Chinese string Cyrillic in records.jsonl, exit 0
    raw = _gb18030_csv()
    start = raw.index("卧室".encode("gb18030"))
    at = {"before a character": start, "inside a character": start + 1}.get(
        where, raw.index(b"seed-03") + 2
    )
    data = tmp_path / "gb.csv"
    data.write_bytes(raw[:at] + b"\xff" + raw[at:])
    code, stderr, out = run(tmp_path, "function-call", "--data", str(data))
    assert code == 2 and not out.exists(), stderr
    line = raw[:at].count(b"\n") + 1
    assert f"{data}:{line}: not UTF-8, and not GB18030 but for byte 0x" in stderr, stderr
    assert "--encoding" in stderr
    data.write_bytes(raw)  # the same file undamaged is read as GB18030, as written
    fields = ("--records-fields", "all")  # records.jsonl with the calls as read
    code, stderr, out = run(tmp_path, "function-call", "--data", str(data), *fields)
    assert code == 0 and "read as gb18030 (detected)" in stderr, stderr
    read = [json.loads(line) for line in (out / "records.jsonl").read_text("utf-8").splitlines()]
    rooms = [r["fields"]["gold_fn"][0]["arguments"]["room"] for r in read]
    assert rooms == [row[2] for row in GB_ROWS]


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("ｺﾝﾆﾁﾊ 半角カナのテキスト、日本語です。ﾃｽﾄ", "cp932"),
        ("Договор аренды: арендатор обязан платить ежемесячно, я согласен.", "cp1251"),
        ("계약서 제3조: 을은 전대할 수 없다.", "cp949"),
    ],
)
def test_other_code_pages_that_break_gb18030_pairs_are_still_read(
    tmp_path: Path, text: str, encoding: str
) -> None:
    """Whole text in another code page is not GB18030 with damaged bytes."""
    data = tmp_path / "other.jsonl"
    record = {"id": "r1", "gold_level": "high", "pred_level": "high", "clause": text}
    data.write_bytes((json.dumps(record, ensure_ascii=False) + "\n").encode(encoding))
    # named relative to the command's folder: the note, one line cut at 120 columns, ends with
    # the encoding, which a long tmp_path (pytest-xdist's popen-gw0/...) pushed past the cut
    code, stderr, _ = run(tmp_path, "contract-risk", "--data", data.name, cwd=tmp_path)
    assert code == 0 and f"read as {encoding} (detected)" in stderr, stderr
