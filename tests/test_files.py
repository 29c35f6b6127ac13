"""Files and frames as users have them: the same records written by pandas, polars, pyarrow,
openpyxl, the csv and gzip modules in every format and encoding pingce reads must give the same
results.json numbers as the plain JSONL (the oracle is that agreement across formats), and each
format has a check of its own whose expected value comes from the records themselves."""

from __future__ import annotations

import csv
import gzip
import json
import math
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import InputError, OptionError
from pingce.labels import RISK_LEVELS
from pingce.records import FieldSpec, load_records

from .cli_run import ENV, run_pingce

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
openpyxl = pytest.importorskip("openpyxl")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CALLS = EXAMPLES / "function_call" / "records.jsonl"
RISK = EXAMPLES / "contract_risk" / "records.jsonl"
RESAMPLES = 200  # intervals too: the same records in the same order give the same resamples


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


CALL_RECORDS = read_jsonl(CALLS)
RISK_RECORDS = read_jsonl(RISK)


def as_cells(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records as a spreadsheet holds them: lists and objects as JSON text, text as it is."""
    return [
        {
            key: json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value
            for key, value in record.items()
        }
        for record in records
    ]


def columns_of(records: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for record in records for key in record))


def results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def numbers(out: Path) -> dict[str, Any]:
    """What must not depend on the format: every metric (value, interval, n), every slice's."""
    data = results(out)
    return {"n": data["n_records"], "metrics": data["metrics"], "slices": data["slices"]}


def evaluate_to(suite: str, data: Any, out: Path, **options: Any) -> dict[str, Any]:
    pingce.evaluate(suite, data, out=out, bootstrap=RESAMPLES, **options)
    return numbers(out)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The numbers of the plain JSONL files (the examples as they are)."""
    root = tmp_path_factory.mktemp("plain")
    return {
        "function-call": evaluate_to("function-call", CALLS, root / "fc"),
        "contract-risk": evaluate_to("contract-risk", RISK, root / "cr", slices="contract_type"),
    }


# ------------------------------------------------------------------------------------ writers


def csv_gbk_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".csv")
    pd.DataFrame(as_cells(records)).to_csv(path, index=False, encoding="gbk")
    return path


def csv_gb18030_by_csv_module(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".csv")
    with open(path, "w", encoding="gb18030", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns_of(records))
        writer.writeheader()
        writer.writerows(as_cells(records))
    return path


def csv_utf16_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".csv")
    pd.DataFrame(as_cells(records)).to_csv(path, index=False, encoding="utf-16")
    assert path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")  # with its byte-order mark
    return path


def csv_utf8_bom_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".csv")
    pd.DataFrame(as_cells(records)).to_csv(path, index=False, encoding="utf-8-sig")
    assert path.read_bytes()[:3] == b"\xef\xbb\xbf"
    return path


def csv_semicolons_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".csv")
    pd.DataFrame(as_cells(records)).to_csv(path, index=False, sep=";")
    return path


def tsv_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".tsv")
    pd.DataFrame(as_cells(records)).to_csv(path, index=False, sep="\t")
    return path


def csv_gz_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".csv.gz")
    pd.DataFrame(as_cells(records)).to_csv(path, index=False, compression="gzip")
    return path


def add_formatted_empty_rows(sheet: Any, first_row: int, rows: int, width: int) -> None:
    """Rows with formatting and no value: Excel keeps them, and openpyxl reads them as rows."""
    fill = openpyxl.styles.PatternFill("solid", fgColor="FFFF00")
    for row in range(first_row, first_row + rows):
        for column in range(1, width + 1):
            sheet.cell(row=row, column=column).fill = fill


def xlsx_by_openpyxl(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".xlsx")
    book = openpyxl.Workbook()
    sheet = book.active
    names = columns_of(records)
    sheet.append(names)
    for record in as_cells(records):
        sheet.append([record.get(name) for name in names])
    add_formatted_empty_rows(sheet, len(records) + 2, 5, len(names))
    book.save(path)
    assert openpyxl.load_workbook(path).active.max_row == len(records) + 6  # the rows exist
    return path


def xlsx_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".xlsx")
    frame = pd.DataFrame(as_cells(records))
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, index=False, sheet_name="records")
        add_formatted_empty_rows(writer.sheets["records"], len(frame) + 2, 3, frame.shape[1])
    assert openpyxl.load_workbook(path).active.max_row == len(records) + 4
    return path


def parquet_by_pyarrow(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".parquet")
    pq.write_table(pa.Table.from_pylist(as_cells(records)), path, row_group_size=7)
    return path


def parquet_by_pandas(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".parquet")
    pd.DataFrame(as_cells(records)).to_parquet(path)
    return path


def parquet_by_polars(records: list[dict[str, Any]], path: Path) -> Path:
    pl = pytest.importorskip("polars")
    path = path.with_suffix(".parquet")
    pl.DataFrame(as_cells(records), infer_schema_length=None).write_parquet(path)
    return path


def jsonl_gz(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".jsonl.gz")
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return path


def json_array(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".json")
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def json_object_holding_the_list(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".json")
    document = {"exported": "2026-11-24", "count": len(records), "items": records}
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def json_gz_array(records: list[dict[str, Any]], path: Path) -> Path:
    path = path.with_suffix(".json.gz")
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(records, handle, ensure_ascii=False)
    return path


WRITERS: list[Callable[[list[dict[str, Any]], Path], Path]] = [
    csv_gbk_by_pandas,
    csv_gb18030_by_csv_module,
    csv_utf16_by_pandas,
    csv_utf8_bom_by_pandas,
    csv_semicolons_by_pandas,
    tsv_by_pandas,
    csv_gz_by_pandas,
    xlsx_by_openpyxl,
    xlsx_by_pandas,
    parquet_by_pyarrow,
    parquet_by_pandas,
    parquet_by_polars,
    jsonl_gz,
    json_array,
    json_object_holding_the_list,
    json_gz_array,
]


# --------------------------------------------------------------------- the same numbers everywhere


@pytest.mark.parametrize("write", WRITERS, ids=lambda w: w.__name__)
def test_function_calls_in_every_format_give_the_numbers_of_the_jsonl(
    tmp_path: Path, plain: dict[str, dict[str, Any]], write: Any
) -> None:
    path = write(CALL_RECORDS, tmp_path / "calls")
    assert evaluate_to("function-call", path, tmp_path / "out") == plain["function-call"]


@pytest.mark.parametrize(
    "write",
    [csv_gbk_by_pandas, csv_utf16_by_pandas, xlsx_by_pandas, parquet_by_pandas, json_array],
    ids=lambda w: w.__name__,
)
def test_contract_risk_in_other_formats_gives_the_numbers_of_the_jsonl(
    tmp_path: Path, plain: dict[str, dict[str, Any]], write: Any
) -> None:
    path = write(RISK_RECORDS, tmp_path / "risk")
    got = evaluate_to("contract-risk", path, tmp_path / "out", slices="contract_type")
    assert got == plain["contract-risk"]
    # the Chinese contract types, read right whatever the encoding, are the slices' names
    expected = Counter(record["contract_type"] for record in RISK_RECORDS)
    slices = {name: s["n_records"] for name, s in got["slices"].items()}
    assert slices == {f"contract_type={kind}": n for kind, n in expected.items()}


def test_nested_parquet_written_by_pyarrow_pandas_and_polars(
    tmp_path: Path, plain: dict[str, dict[str, Any]]
) -> None:
    """Lists of objects as Arrow types (list<struct>), not text: every writer's file gives the
    numbers of the JSONL."""
    pl = pytest.importorskip("polars")
    written = {
        "pyarrow": tmp_path / "a.parquet",
        "pandas": tmp_path / "b.parquet",
        "polars": tmp_path / "c.parquet",
    }
    pq.write_table(pa.Table.from_pylist(RISK_RECORDS), written["pyarrow"], row_group_size=16)
    pd.DataFrame(RISK_RECORDS).to_parquet(written["pandas"])
    pl.DataFrame(RISK_RECORDS, infer_schema_length=None).write_parquet(written["polars"])
    for name, path in written.items():
        schema = pq.read_schema(path)
        kind = schema.field("evidence").type
        assert pa.types.is_list(kind) or pa.types.is_large_list(kind), name  # really nested
        got = evaluate_to("contract-risk", path, tmp_path / name, slices="contract_type")
        assert got == plain["contract-risk"], name


def test_a_gbk_csv_through_the_command_line(tmp_path: Path) -> None:
    """Before: a UnicodeDecodeError traceback and exit 1."""
    path = csv_gbk_by_pandas(RISK_RECORDS, tmp_path / "导出")
    plain_out, gbk_out = tmp_path / "plain", tmp_path / "gbk"
    args = ["--bootstrap", "100", "--slice", "contract_type"]
    done = run_pingce("run", "contract-risk", "--data", str(RISK), "--out", str(plain_out), *args)
    assert done.returncode == 0, done.stderr
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(gbk_out), *args)
    assert done.returncode == 0, done.stderr
    assert numbers(gbk_out) == numbers(plain_out)
    # each record's line is the line its row ends on (a contract spans lines), as the csv module
    # counts them
    with open(path, encoding="gbk", newline="") as handle:
        reader = csv.reader(handle)
        ends = [reader.line_num for _ in reader][1:]
    lines = (gbk_out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["line"] for line in lines] == ends


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CALL_RECORDS)),
        ("array", json.dumps(CALL_RECORDS, ensure_ascii=False, indent=1)),
        ("csv", pd.DataFrame(as_cells(CALL_RECORDS)).to_csv(index=False)),
    ],
)
def test_standard_input(
    tmp_path: Path, plain: dict[str, dict[str, Any]], name: str, text: str
) -> None:
    out = tmp_path / name
    done = subprocess.run(
        [sys.executable, "-m", "pingce", "run", "function-call", "--data", "-", "--out", str(out),
         "--bootstrap", str(RESAMPLES)],
        input=text.encode("utf-8"), capture_output=True, env=ENV, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert numbers(out) == plain["function-call"]
    assert results(out)["data"]["source"] == "<stdin>"


# ----------------------------------------------------------------------------------- encodings


def risk_gbk_csv(tmp_path: Path) -> tuple[Path, bytes]:
    path = csv_gbk_by_pandas(RISK_RECORDS, tmp_path / "risk")
    return path, path.read_bytes()


def test_encoding_forced_right_and_wrong(tmp_path: Path) -> None:
    path, data = risk_gbk_csv(tmp_path)
    right = tmp_path / "right"
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(right),
                      "--bootstrap", "0", "--encoding", "gb18030")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert results(right)["n_records"] == len(RISK_RECORDS)
    # forced UTF-8: the first byte that is not ASCII is where it stops (found here in the bytes)
    first = next(i for i, byte in enumerate(data) if byte >= 0x80)
    line = data.count(b"\n", 0, first) + 1
    wrong = tmp_path / "wrong"
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(wrong),
                      "--bootstrap", "0", "--encoding", "utf-8")  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{path}:{line}: cannot be read as utf-8" in done.stderr
    assert f"byte offset {first}" in done.stderr
    assert not wrong.exists()
    # forced Latin-1 reads every byte, as the wrong characters: the labels are unknown
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(wrong),
                      "--encoding", "latin-1")  # fmt: skip
    assert done.returncode == 2 and "unknown label" in done.stderr and not wrong.exists()


def test_an_unknown_encoding_name_is_an_option_error(tmp_path: Path) -> None:
    done = run_pingce("run", "contract-risk", "--data", str(RISK), "--out", str(tmp_path / "o"),
                      "--encoding", "klingon-8")  # fmt: skip
    assert done.returncode == 2 and "--encoding 'klingon-8'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()
    with pytest.raises(OptionError, match="--encoding"):
        pingce.evaluate("contract-risk", RISK, encoding="klingon-8")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json", ".tsv"])
def test_a_file_that_decodes_in_no_way_is_exit_2_without_outputs(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"binary{suffix}"
    path.write_bytes(random.Random(7).randbytes(3000))
    assert b"\x00" in path.read_bytes()  # not text in any encoding a person writes
    out = tmp_path / "out"
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"pingce: error: {path}")
    assert "encoding" in done.stderr and "byte offset" in done.stderr
    assert not out.exists()


def test_a_bad_byte_after_the_detected_prefix_names_its_line_and_offset(tmp_path: Path) -> None:
    """UTF-8 for the first 64 KB (so detected as UTF-8), then a GBK cell."""
    rows = ["id,gold_level,pred_level"] + [f"r{i},高,中" for i in range(8000)]
    head = ("\n".join(rows) + "\n").encode("utf-8")
    assert len(head) > 1 << 16
    data = head + "late,低,低\n".encode("gbk")
    path = tmp_path / "mixed.csv"
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        load_records(path, [FieldSpec("gold_level", "label", scale=RISK_LEVELS)])
    offset = len(head) + len(b"late,")
    assert info.value.line == len(rows) + 1
    assert f"byte offset {offset}" in str(info.value)
    assert "--encoding" in str(info.value)


def test_a_jsonl_file_in_gbk_and_in_utf16(tmp_path: Path, plain: dict[str, dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CALL_RECORDS)
    for encoding in ("gb18030", "utf-16"):
        path = tmp_path / f"{encoding}.jsonl"
        path.write_bytes(text.encode(encoding))
        assert evaluate_to("function-call", path, tmp_path / encoding) == plain["function-call"]


def test_a_jsonl_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    """UTF-8 (with Chinese) for more than the first 64 KB, then a line in GBK."""
    line = json.dumps({"gold_level": "高", "pred_level": "中"}, ensure_ascii=False) + "\n"
    good = line * 3000
    assert len(good.encode("utf-8")) > 1 << 16
    bad = json.dumps({"gold_level": "低", "pred_level": "低"}, ensure_ascii=False) + "\n"
    path = tmp_path / "late.jsonl"
    path.write_bytes(good.encode("utf-8") + bad.encode("gbk"))
    specs = [FieldSpec("gold_level", "label", scale=RISK_LEVELS)]
    with pytest.raises(InputError) as info:
        load_records(path, specs)
    assert info.value.line == 3001 and "not UTF-8" in str(info.value)
    assert "--encoding" in str(info.value)
    # in a short file, ASCII lines and a GBK line read as GB18030 (every byte fits)
    ascii_lines = json.dumps({"gold_level": "高", "pred_level": "中"}) + "\n"  # \u escapes
    path.write_bytes(ascii_lines.encode("ascii") * 3 + bad.encode("gbk"))
    assert load_records(path, specs).column("gold_level").tolist() == [0, 0, 0, 2]  # 高 高 高 低


# issue 28: a UTF-8 file with a bad byte is not read in another code page; a legacy code page
# only where the text is plausible in it, and the encoding read is said


EXAMPLE_SUITES = {"function-points": "function_points", "tool-use": "tool_use"}


@pytest.mark.parametrize("suite", EXAMPLE_SUITES)
def test_a_utf8_file_with_one_bad_byte_is_an_error_naming_line_and_offset(
    tmp_path: Path, suite: str
) -> None:
    """Was read as ptcp154 / cp1251 (every Chinese string mojibake; exit 0, other numbers)."""
    data = (EXAMPLES / EXAMPLE_SUITES[suite] / "records.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    line = next(i for i, text in enumerate(lines) if any(b >= 0x80 for b in text)) + 1
    offset = sum(map(len, lines[: line - 1])) + lines[line - 1].index(b'"') + 1
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data[:offset] + b"\xff" + data[offset:])
    out = tmp_path / "out"
    done = run_pingce("run", suite, "--data", str(path), "--out", str(out), "--bootstrap", "0")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
    assert f"{path}:{line}: not UTF-8: byte 0xff at byte offset {offset}" in done.stderr
    assert "--encoding" in done.stderr


@pytest.mark.parametrize("level", ["高", "中", "低"])
def test_a_short_cjk_file_with_a_bad_byte_is_read_in_no_implausible_code_page(
    tmp_path: Path, level: str
) -> None:
    """Three of its four bytes beyond ASCII UTF-8: too few to call it UTF-8, and no code page
    reads it plausibly (it was read as cp1125, cp775 or cp1250: Cyrillic or accented letters
    where the Chinese label was, then 'unknown label')."""
    path = tmp_path / "short.jsonl"
    line = json.dumps({"id": "r1", "gold_level": level}, ensure_ascii=False)[:-1]
    path.write_bytes(line.encode("utf-8") + b', "pred_level": "\xff"}\n')
    offset = path.read_bytes().index(b"\xff")
    out = tmp_path / "out"
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(out))
    assert done.returncode == 2 and not out.exists()
    assert (
        f"{path}:1: cannot tell the text encoding: not UTF-8 (byte 0xff at byte offset "
        f"{offset})" in done.stderr
    )


LEGACY_TEXTS = {
    "latin-1": "Le patient se plaint de maux de tête et de fièvre; il a été opéré à l'hôpital.",
    "cp1252": "Der Vertrag enthält eine Kündigungsfrist – „drei Monate“ – und 12 € Gebühr.",
    "gbk": "甲方应于每月五日前支付租金，逾期按日计息。",
    "gb18030": "患者自述头痛发热三天，伴有咳嗽、乏力；𠮷字在此。",
    "utf-16": "合同第三条：乙方不得转租。Clause 3: no subletting.",
}
READ_AS = {"latin-1": "cp1252", "cp1252": "cp1252", "gbk": "gb18030", "gb18030": "gb18030",
           "utf-16": "utf-16"}  # fmt: skip


@pytest.mark.parametrize("encoding", LEGACY_TEXTS)
@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_files_in_legacy_code_pages_read_right_and_record_the_encoding(
    tmp_path: Path, encoding: str, suffix: str
) -> None:
    """Latin-1 French was read as cp1257 (``tête`` as ``tźte``); each now reads exactly, and
    the table says in which encoding (and a note, as it is not UTF-8)."""
    texts = [LEGACY_TEXTS[encoding], LEGACY_TEXTS[encoding][:12], "plain ASCII"]
    path = tmp_path / f"records{suffix}"
    if suffix == ".csv":
        rows = "".join(f'r{i},"{t}"\n' for i, t in enumerate(texts))
        content = "id,text\n" + rows
    else:
        content = "".join(
            json.dumps({"id": f"r{i}", "text": t}, ensure_ascii=False) + "\n"
            for i, t in enumerate(texts)
        )
    path.write_bytes(content.encode(encoding))
    table = load_records(path, [FieldSpec("text", "string")])
    assert table.column("text") == texts
    assert table.encoding == READ_AS[encoding]
    assert table.notes == [f"{path}: text read as {READ_AS[encoding]} (detected)"]


def test_the_encoding_is_in_results_json_and_said_when_not_utf8(tmp_path: Path) -> None:
    path, _ = risk_gbk_csv(tmp_path)
    # the file named as given, relative to the command's folder: the console's note is one line,
    # cut at 120 columns, which a long tmp_path (pytest-xdist's popen-gw0/...) would pass
    given = path.relative_to(tmp_path)
    out = tmp_path / "gbk"
    done = run_pingce("run", "contract-risk", "--data", str(given), "--out", str(out),
                      "--bootstrap", "0", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert results(out)["data"]["encoding"] == "gb18030"
    assert f"{given}: text read as gb18030 (detected)" in done.stdout
    forced = tmp_path / "forced"
    done = run_pingce("run", "contract-risk", "--data", str(given), "--out", str(forced),
                      "--bootstrap", "0", "--encoding", "gbk", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert results(forced)["data"]["encoding"] == "gbk"
    assert f"{given}: text read as gbk (as --encoding asked)" in done.stdout
    plain = tmp_path / "plain"
    done = run_pingce("run", "contract-risk", "--data", str(RISK), "--out", str(plain),
                      "--bootstrap", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert results(plain)["data"]["encoding"] == "utf-8"
    assert "text read as" not in done.stdout
    frame = pingce.evaluate("contract-risk", pd.DataFrame(RISK_RECORDS), bootstrap=0)
    assert frame.data.encoding is None  # not text


def test_a_utf8_file_forced_into_a_code_page_is_said_to_read_as_utf8_too(tmp_path: Path) -> None:
    """--encoding latin-1 on a UTF-8 file: every Chinese character becomes two or three Latin
    ones, and latin-1 reads any byte, so nothing fails. The user asked for it, but the note
    says the text reads as UTF-8 too (a GBK file forced as GBK gets no such words)."""
    path = tmp_path / "u8.jsonl"
    record = {"id": "j1", "task": "selection", "gold_items": ["员工信息表"], "pred_items": ["员工"]}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", "utf-8")
    done = run_pingce("run", "function-points", "--data", str(path), "--out", str(tmp_path / "o"),
                      "--bootstrap", "0", "--encoding", "latin-1", "--no-store")  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = " ".join(results(tmp_path / "o")["notes"])  # the console's note: one line, cut
    assert f"{path}: text read as iso8859-1 (as --encoding asked); its characters beyond ASCII " \
        "read as UTF-8 too" in said  # fmt: skip
    assert f"note: {path}"[:70] in done.stdout
    gbk, _ = risk_gbk_csv(tmp_path)
    done = run_pingce("run", "contract-risk", "--data", str(gbk), "--out", str(tmp_path / "g"),
                      "--bootstrap", "0", "--encoding", "gbk", "--no-store")  # fmt: skip
    assert done.returncode == 0 and "read as UTF-8 too" not in done.stdout, done.stderr


# issue 28: a number field's cell is a number, a boolean field's true/false a boolean, in every
# suite (tcm-dialogue's turn and confidence are parsed JSON fields)

DIALOGUES = EXAMPLES / "tcm_dialogue" / "records.jsonl"


def dialogue_cells(spelling: Callable[[bool], str]) -> tuple[list[str], list[list[str]]]:
    """The tcm-dialogue example as rows of text cells: lists and objects as JSON text, booleans
    spelled by ``spelling``, numbers as digits, null as an empty cell."""
    records = read_jsonl(DIALOGUES)
    names = columns_of(records)

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return spelling(value)
        if isinstance(value, list | dict):
            return json.dumps(value, ensure_ascii=False)
        return str(value)

    return names, [[cell(r.get(name)) for name in names] for r in records]


def test_tcm_dialogue_reads_csv_tsv_stdin_and_excel_text_cells(tmp_path: Path) -> None:
    """Was 'field 'turn': expected an integer turn index (got "1")' for every text source, and
    an Excel text cell 'true' was not a boolean."""
    expected = evaluate_to("tcm-dialogue", DIALOGUES, tmp_path / "jsonl")
    spellings: list[Callable[[bool], str]] = [
        lambda b: "true" if b else "false",
        lambda b: "TRUE" if b else "FALSE",  # Excel's CSV
        str,  # pandas' True / False
    ]
    for k, spelling in enumerate(spellings):
        names, rows = dialogue_cells(spelling)
        for suffix, delimiter in ((".csv", ","), (".tsv", "\t")):
            path = tmp_path / f"dialogues{k}{suffix}"
            with open(path, "w", encoding="utf-8", newline="") as handle:
                csv.writer(handle, delimiter=delimiter).writerows([names, *rows])
            got = evaluate_to("tcm-dialogue", path, tmp_path / f"out{k}{suffix}")
            assert got == expected, (suffix, spelling(True))
    names, rows = dialogue_cells(lambda b: "true" if b else "false")
    csv_path = tmp_path / "dialogues0.csv"  # the first spelling's CSV, on standard input
    out = tmp_path / "stdin"
    done = subprocess.run(
        [sys.executable, "-m", "pingce", "run", "tcm-dialogue", "--data", "-", "--out", str(out),
         "--bootstrap", str(RESAMPLES)],
        input=csv_path.read_bytes(), capture_output=True, env=ENV, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert numbers(out) == expected
    # an Excel sheet of text cells only (booleans typed as the words true and false)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(names)
    for row in rows:
        sheet.append([c if c else None for c in row])
    assert sheet.cell(row=2, column=names.index("turn") + 1).data_type == "s"  # text, not number
    path = tmp_path / "dialogues.xlsx"
    book.save(path)
    assert evaluate_to("tcm-dialogue", path, tmp_path / "xlsx") == expected


# ------------------------------------------------------------------- format-specific behaviour


def test_xlsx_rows_are_excel_row_numbers_and_a_sheet_can_be_named(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    book = openpyxl.Workbook()
    book.active.title = "notes"
    book.active.append(["nothing to see"])
    sheet = book.create_sheet("评测")
    sheet.append(["id", "gold_level", "pred_level", "latency_sec"])
    sheet.append(["a", "高", "中", 1.5])
    sheet.append([None, None, None, None])  # an empty row in the middle: skipped
    sheet.append([7, "低", "低", 2])  # a number id, a number of latency
    sheet.append(["b", "超高", "低", 3])  # row 5
    book.save(path)
    specs = [FieldSpec("gold_level", "label", scale=RISK_LEVELS),
             FieldSpec("latency_sec", "number", required=False)]  # fmt: skip
    with pytest.raises(InputError) as info:
        load_records(f"{path}#评测", specs)
    assert str(info.value).startswith(f"{path}#评测: row 5: field 'gold_level'")
    good = tmp_path / "good.xlsx"
    book.remove(book["notes"])
    sheet.delete_rows(5)
    book.save(good)
    table = load_records(good, specs)
    assert table.ids == ["a", "7"] and table.lines.tolist() == [2, 4]
    assert table.column("latency_sec").tolist() == [1.5, 2.0]
    with pytest.raises(InputError, match="no sheet 'nope'"):
        load_records(f"{good}#nope", specs)


def test_parquet_and_json_errors_name_the_record(tmp_path: Path) -> None:
    rows = [{"id": f"r{i}", "gold_level": "高", "pred_level": "中"} for i in range(40)]
    rows[33]["pred_level"] = "极高"
    specs = [FieldSpec("pred_level", "label", scale=RISK_LEVELS)]
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=10)
    with pytest.raises(InputError) as info:
        load_records(path, specs)
    assert str(info.value).startswith(f"{path}: record 34: field 'pred_level'")
    array = json_array(rows, tmp_path / "r")
    with pytest.raises(InputError) as info:
        load_records(array, specs)
    assert str(info.value).startswith(f"{array}: record 34: field 'pred_level'")
    rows[33]["pred_level"] = "中"
    rows[35]["id"] = "r2"
    array = json_array(rows, tmp_path / "r")
    with pytest.raises(
        InputError, match="record 36: field 'id': duplicate id; first seen on record 3"
    ):
        load_records(array, specs)


def test_parquet_reads_only_the_columns_the_suite_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"id": f"r{i}", "gold_level": "高", "pred_level": "中", "contract": "x" * 100,
             "extra": [1, 2]} for i in range(5)]  # fmt: skip
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    asked: list[Any] = []
    real = pq.ParquetFile.iter_batches

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("columns"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    table = load_records(path, [FieldSpec("pred_level", "label", scale=RISK_LEVELS)])
    assert table.ids == [f"r{i}" for i in range(5)]
    assert [sorted(columns) for columns in asked] == [["id", "pred_level"]]


def test_a_json_object_holding_two_lists_names_them(tmp_path: Path) -> None:
    rows = [{"id": "a", "gold_level": "高", "pred_level": "中"}]
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"train": rows, "test": rows * 1}), encoding="utf-8")
    specs = [FieldSpec("gold_level", "label", scale=RISK_LEVELS)]
    with pytest.raises(InputError) as info:
        load_records(path, specs)
    assert "'train', 'test'" in str(info.value) and f"{path}#train" in str(info.value)
    assert load_records(f"{path}#test", specs).ids == ["a"]


def test_a_json_file_of_lines_and_one_record_still_read(tmp_path: Path) -> None:
    """.json files that were JSON lines (or one record, pretty-printed) before keep working."""
    specs = [FieldSpec("gold_level", "label", scale=RISK_LEVELS)]
    lines = tmp_path / "lines.json"
    lines.write_text('{"id": "a", "gold_level": "高"}\n{"id": "b", "gold_level": "低"}\n')
    table = load_records(lines, specs)
    assert table.ids == ["a", "b"] and table.lines.tolist() == [1, 2]
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"id": "z", "gold_level": "中", "tags": [{"a": 1}]}, indent=2))
    assert load_records(one, specs).ids == ["z"]


def test_empty_and_broken_json_files(tmp_path: Path) -> None:
    specs = [FieldSpec("gold_level", "label", scale=RISK_LEVELS)]
    for text in ("", "  \n", "[]"):
        path = tmp_path / "empty.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match="no records: the input is empty"):
            load_records(path, specs)
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"id": "a", "gold_level": "高"},\n  {"id": \n]\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, specs)
    assert str(info.value).startswith(f"{path}: not valid JSON")
    assert "line 4 column 1" in str(info.value)  # where the value of "id" should have been
    path.write_text('[{"id": "a", "gold_level": "高"}, "b"]', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, specs)
    assert str(info.value).startswith(f"{path}: record 2: each record must be a JSON object")


def test_csv_delimiters_are_sniffed_from_the_header(tmp_path: Path) -> None:
    specs = [FieldSpec("gold_level", "label", scale=RISK_LEVELS),
             FieldSpec("note", "string", required=False)]  # fmt: skip
    for delimiter in ",;\t|":
        path = tmp_path / "d.csv"
        other = ";" if delimiter == "," else ","
        path.write_text(
            f"id{delimiter}gold_level{delimiter}note\n"
            f'a{delimiter}高{delimiter}"x{other}y"\n'
            f"b{delimiter}低{delimiter}\n",
            encoding="utf-8",
        )
        table = load_records(path, specs)
        assert table.ids == ["a", "b"], delimiter
        assert table.column("note") == [f"x{other}y", None], delimiter


def test_spreadsheet_empty_rows_in_csv_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_text("id,gold_level\na,高\n,\nb,低\n,\n,\n", encoding="utf-8")
    table = load_records(path, [FieldSpec("gold_level", "label", scale=RISK_LEVELS)])
    assert table.ids == ["a", "b"] and table.lines.tolist() == [2, 4]


LEVELS_ONLY = [FieldSpec("gold_level", "label", scale=RISK_LEVELS),
               FieldSpec("pred_level", "label", scale=RISK_LEVELS)]  # fmt: skip


def test_an_unterminated_csv_quote_is_reported_where_it_opens(tmp_path: Path) -> None:
    """Was reported two lines later (the row that took the rest of the file in one cell) as a
    missing field or an unknown label."""
    path = tmp_path / "quote.csv"
    path.write_text('id,gold_level,pred_level\nr1,"高,中\nr2,低,低\nr3,中,中\n', encoding="utf-8")
    out = tmp_path / "out"
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr and not out.exists()
    assert f"{path}:2: a quoted cell opens here and is never closed (an unterminated quote" in (
        done.stderr
    )
    assert """(got '"高,中')""" in done.stderr
    # on standard input, in a TSV, and after a cell of several lines: the line of the quote
    piped = subprocess.run(
        [sys.executable, "-m", "pingce", "run", "contract-risk", "--data", "-", "--out", str(out)],
        input=path.read_bytes(), capture_output=True, env=ENV, timeout=300, check=False,
    )  # fmt: skip
    assert piped.returncode == 2 and "<stdin>:2: a quoted cell opens here" in piped.stderr.decode()
    tsv = tmp_path / "quote.tsv"
    tsv.write_text('id\tgold_level\tpred_level\n"r\n1"\t高\t中\nr2\t低\t"低\n', "utf-8")
    with pytest.raises(InputError, match="never closed") as info:
        load_records(tsv, LEVELS_ONLY)
    assert info.value.line == 4
    # a quote closed on a later line, then text: at the line it opened, naming where it closed
    path.write_text('id,gold_level,pred_level\nr1,高,"中\nr2,低,"低"\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_records(path, LEVELS_ONLY)
    assert info.value.line == 2
    assert "on line 3, where the quoted cell opened here closes" in str(info.value)


def test_an_unterminated_quote_in_a_long_file_stops_at_the_field_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pingce.readers.CSV_FIELD_LIMIT", 200)
    rows = [f"r{i},高,中" for i in range(100)]
    rows[4] = 'r4,高,"中'  # line 6
    path = tmp_path / "long.csv"
    path.write_text("id,gold_level,pred_level\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"never closed.*field larger than field limit") as info:
        load_records(path, LEVELS_ONLY)
    assert info.value.line == 6


def test_a_csv_row_with_more_cells_than_the_header_is_an_error(tmp_path: Path) -> None:
    """Was read without a word (the extra cell dropped; a delimiter in an unquoted cell moves
    the cells after it)."""
    path = tmp_path / "extra.csv"
    path.write_text("id,gold_level,pred_level\nr1,高,中\nr2,低,低,1.5 s\nr3,中,中\n", "utf-8")
    out = tmp_path / "out"
    done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr and not out.exists()
    assert f"{path}:3: more cells than the header's 3 columns: cell 4 holds a value" in (
        done.stderr
    )
    assert '(got "1.5 s")' in done.stderr
    # empty cells after the last column (a spreadsheet's trailing delimiters) are no values
    path.write_text("id,gold_level,pred_level\nr1,高,中,\nr2,低,低,,\n", "utf-8")
    assert load_records(path, LEVELS_ONLY).ids == ["r1", "r2"]


def test_a_truncated_gz_file_is_an_input_error(tmp_path: Path) -> None:
    whole = jsonl_gz(CALL_RECORDS * 50, tmp_path / "calls")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(InputError) as info:
        pingce.evaluate("function-call", cut, bootstrap=0)
    assert str(info.value).startswith(str(cut))


def test_without_pyarrow_or_openpyxl_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parquet = parquet_by_pyarrow(CALL_RECORDS, tmp_path / "c")
    xlsx = xlsx_by_openpyxl(CALL_RECORDS, tmp_path / "c")
    for module in ("pyarrow", "pyarrow.parquet", "openpyxl"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    for path in (parquet, xlsx):
        with pytest.raises(InputError, match=r"pip install 'pingce\[files\]'"):
            pingce.evaluate("function-call", path, bootstrap=0)


# -------------------------------------------------------------------------------------- frames


@pytest.fixture(scope="module")
def plain_calls_by_value(plain: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return plain["function-call"]


def frame_numbers(tmp_path: Path, suite: str, frame: Any, **options: Any) -> dict[str, Any]:
    return evaluate_to(suite, frame, tmp_path / type(frame).__name__, **options)


def test_pandas_frames_of_nested_records_and_of_cells(
    tmp_path: Path, plain: dict[str, dict[str, Any]]
) -> None:
    """Before: "each record must be a JSON object (got "id")"."""
    nested = pd.DataFrame(CALL_RECORDS)
    assert frame_numbers(tmp_path / "n", "function-call", nested) == plain["function-call"]
    cells = pd.DataFrame(as_cells(CALL_RECORDS))
    assert frame_numbers(tmp_path / "c", "function-call", cells) == plain["function-call"]
    risk = pd.DataFrame(RISK_RECORDS)
    got = frame_numbers(tmp_path / "r", "contract-risk", risk, slices="contract_type")
    assert got == plain["contract-risk"]


def test_polars_pyarrow_and_datasets_frames(
    tmp_path: Path, plain: dict[str, dict[str, Any]]
) -> None:
    pl = pytest.importorskip("polars")
    datasets = pytest.importorskip("datasets")
    frames = {
        "polars": pl.DataFrame(RISK_RECORDS, infer_schema_length=None),
        "pyarrow": pa.Table.from_pylist(RISK_RECORDS),
        "batch": pa.RecordBatch.from_pylist(RISK_RECORDS),
        "datasets": datasets.Dataset.from_list(RISK_RECORDS),
    }
    for name, frame in frames.items():
        got = evaluate_to("contract-risk", frame, tmp_path / name, slices="contract_type")
        assert got == plain["contract-risk"], name
    cells = as_cells(CALL_RECORDS)
    for name, frame in {
        "polars": pl.DataFrame(cells),
        "pyarrow": pa.Table.from_pylist(cells),
        "datasets": datasets.Dataset.from_list(cells),
    }.items():
        assert (
            evaluate_to("function-call", frame, tmp_path / f"fc-{name}") == plain["function-call"]
        ), name


def test_a_shuffled_dataset_is_read_in_its_own_order(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    data = datasets.Dataset.from_list(RISK_RECORDS).shuffle(seed=3).select(range(10))
    result = pingce.evaluate("contract-risk", data, bootstrap=0)
    assert [row["id"] for row in result.record_values()] == data["id"]


def test_nan_is_missing_for_an_optional_field_and_numpy_ids_are_ids(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "id": np.arange(1, 7, dtype=np.int64),
            "gold_level": ["高", "中", "低", "高", "中", "低"],
            "pred_level": ["高", "低", "低", "中", "中", "低"],
            "latency_sec": [1.0, np.nan, 2.5, None, 4.0, 0.5],
        }
    )
    result = pingce.evaluate("contract-risk", frame, bootstrap=0)
    present = [1.0, 2.5, 4.0, 0.5]
    latency = result.metrics["avg_latency_sec"]
    assert latency.n == len(present) and math.isclose(latency.value, float(np.mean(present)))
    assert result.metrics["accuracy"].value == 4 / 6
    assert [row["id"] for row in result.record_values()] == ["1", "2", "3", "4", "5", "6"]
    # the same with pandas' own missing value in a nullable column
    frame["latency_sec"] = frame["latency_sec"].astype("Float64")
    assert pingce.evaluate("contract-risk", frame, bootstrap=0).metrics[
        "avg_latency_sec"
    ].value == float(np.mean(present))
    frame.loc[4, "id"] = 2
    with pytest.raises(InputError) as info:
        pingce.evaluate("contract-risk", frame, bootstrap=0)
    assert str(info.value).startswith("<pandas DataFrame>: row 5: field 'id': duplicate id")


def test_numpy_values_in_an_iterable_of_dictionaries() -> None:
    records = [
        {"id": np.int64(1), "gold_level": "高", "pred_level": "高", "latency_sec": 1.0},
        {"id": np.int32(2), "gold_level": "低", "pred_level": "中", "latency_sec": 3.0},
    ]
    result = pingce.evaluate("contract-risk", records, bootstrap=0)
    assert [row["id"] for row in result.record_values()] == ["1", "2"]


def test_numpy_arrays_in_cells_read_as_lists(
    tmp_path: Path, plain: dict[str, dict[str, Any]]
) -> None:
    """pandas reads list columns of Parquet as numpy arrays in each cell (of dictionaries whose
    values are arrays again)."""
    path = tmp_path / "risk.parquet"
    pq.write_table(pa.Table.from_pylist(RISK_RECORDS), path)
    frame = pd.read_parquet(path)
    cell = frame["gold_rules"].dropna().iloc[0]
    assert isinstance(cell, np.ndarray)
    got = evaluate_to("contract-risk", frame, tmp_path / "out", slices="contract_type")
    assert got == plain["contract-risk"]


def test_compare_takes_frames(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    candidate = pd.DataFrame(RISK_RECORDS)
    baseline = pl.DataFrame(RISK_RECORDS, infer_schema_length=None)
    result = pingce.compare("contract-risk", candidate, baseline, bootstrap=0)
    assert result.metrics["accuracy"].candidate == result.metrics["accuracy"].baseline
    aliases = {"high": "高", "medium": "中", "low": "低"}  # the suite's label aliases, by hand

    def level(raw: str) -> str:
        return aliases.get(raw.strip().casefold(), raw.strip())

    hits = sum(level(r["gold_level"]) == level(r["pred_level"]) for r in RISK_RECORDS)
    assert result.metrics["accuracy"].candidate == hits / len(RISK_RECORDS)
    assert all(m.delta in (0.0, None) for m in result.metrics.values())


def test_frame_libraries_are_not_imported_by_pingce() -> None:
    code = (
        "import sys, pingce, pingce.records, pingce.readers, pingce.engine\n"
        "pingce.evaluate('contract-risk', 'examples/contract_risk/records.jsonl', bootstrap=0)\n"
        "print(sorted(m for m in ('pandas', 'polars', 'pyarrow', 'datasets', 'openpyxl')\n"
        "             if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=ENV, check=False,
        cwd=EXAMPLES.parent, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
