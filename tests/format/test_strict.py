"""The repeated-key check (logbook.format.strict) on texts as harnesses write them: its fast
paths (the text is orjson's or Python's json.dumps bytes of its own parse) never pass a text
that gives a key twice, at any depth, and the JSON Lines door refuses such a line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from logbook.format.strict import repeated_key


@pytest.mark.parametrize("raw,key", [
    (b'{"id": "a", "score": 1}', None),
    (json.dumps({"id": "q\u00e9", "score": 0.1, "x": [1, {"y": None}]}).encode(), None),
    (b'{"id":"a","score":1}', None),
    (b'{"id": "a", "id": "b"}', "id"),
    (b'{"id": "a", "x": {"k": 1, "k": 1}}', "k"),
    (b'{"id":"a","id":"a"}', "id"),
    (b'[{"s": 1, "s": 2}]', "s"),
])
def test_a_key_given_twice_is_found_whatever_the_spacing(raw: bytes, key: str | None) -> None:
    assert repeated_key(raw, orjson.loads(raw), sort=False) == key


def test_a_json_lines_file_with_a_repeated_key_is_refused(tmp_path: Path, cli: Any) -> None:
    work = tmp_path / "work"
    assert cli("init", str(work), "--name", "t").code == 0
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text("".join(json.dumps({"id": f"q{i}", "score": i % 2}) + "\n" for i in range(5)))
    bad.write_text(good.read_text() + '{"id": "q9", "score": 1, "score": 0}\n')
    before = cli("--ledger", str(work), "log", "--json").out
    r = cli("--ledger", str(work), "append", "--from", "jsonl", str(bad))
    assert r.code == 2 and "line 6" in r.err and "score" in r.err, r.err
    assert cli("--ledger", str(work), "log", "--json").out == before
    assert cli("--ledger", str(work), "append", "--from", "jsonl", str(good)).code == 0


def test_a_repeated_key_in_a_later_chunk_or_a_long_line_is_named() -> None:
    from logbook.errors import InputError
    from logbook.ingest import jsonl

    lines = [json.dumps({"id": f"q{i}", "score": i % 2}) for i in range(2500)]
    long_id = "x" * 600_000  # a line longer than a chunk's text: a chunk of its own
    with_long = [*lines[:1200], json.dumps({"id": long_id, "score": 1}), *lines[1200:]]
    assert jsonl.parse("\n".join(with_long).encode(), "f.jsonl")["id"][1200] == long_id
    for at in (1500, 2400):
        bad = list(lines)
        bad[at] = f'{{"id": "q{at}", "score": 1, "score": 0}}'
        with pytest.raises(InputError, match=f"line {at + 1}: field 'score' is given twice"):
            jsonl.parse("\n".join(bad).encode(), "f.jsonl")
    bad = [*lines[:10], f'{{"id": "{long_id}", "score": 1, "id": "again"}}', *lines[10:]]
    with pytest.raises(InputError, match="line 11: field 'id' is given twice"):
        jsonl.parse("\n".join(bad).encode(), "f.jsonl")
