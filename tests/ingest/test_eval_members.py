"""One parse, strict, for Inspect archives (issue 34, items 4 and 8): a `.eval` holding two
members of one name (two `header.json`: two readers could read two different logs) is refused,
and a deflated member is bounded by its zip directory as a zstd one is: inflated in chunks and
never past the size the directory gives it (a 2 MB file once reached 4.2 GB)."""

from __future__ import annotations

import struct
import warnings
import zipfile
import zlib
from pathlib import Path

import pytest
from conftest import run_cli

from logbook.errors import InputError
from logbook.ingest._eval_zip import EvalArchive, check_before_reading

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"


def _real_eval() -> Path:
    return next((FIXTURES / "run-main").glob("*.eval"))


def test_two_members_of_one_name_are_refused(ledger_dir: Path, tmp_path: Path) -> None:
    src = _real_eval()
    twice = tmp_path / "twice.eval"
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(twice, "w") as new, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate it is told to write
        for info in old.infolist():
            new.writestr(info.filename, old.read(info.filename) if info.compress_type != 93
                         else b"{}")
        new.writestr("header.json", b'{"status": "success", "eval": {}}')
    before = run_cli("log", "--json").json
    r = run_cli("append", "--from", "inspect", str(twice))
    assert r.code == 2 and "appears twice" in r.err and "header.json" in r.err, r.err
    assert run_cli("log", "--json").json == before


def _deflated_eval(path: Path, name: str, data: bytes, declared_size: int) -> Path:
    """An archive of one deflated member whose zip directory declares ``declared_size``."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    blob = deflater.compress(data) + deflater.flush()
    raw = name.encode()
    sizes = (zlib.crc32(data[:declared_size]), len(blob), declared_size, len(raw))
    body = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 33, *sizes, 0) + raw + blob
    directory = struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 8, 0, 33, *sizes,
                            0, 0, 0, 0, 0, 0) + raw
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(directory), len(body), 0)
    path.write_bytes(body + directory + end)
    return path


def test_a_deflated_member_never_inflates_past_its_declared_size(ledger_dir: Path,
                                                                 tmp_path: Path) -> None:
    bomb = _deflated_eval(tmp_path / "bomb.eval", "header.json",
                          b"{" + b" " * (200 * 1024 * 1024) + b"}", 100)
    assert bomb.stat().st_size < 1024 * 1024
    with pytest.raises(InputError, match="inflates to more"):
        check_before_reading(bomb)
    with EvalArchive(bomb) as archive, pytest.raises(InputError, match="inflates to more"):
        archive.read("header.json")
    r = run_cli("append", "--from", "inspect", str(bomb))
    assert r.code == 2 and "inflates to more" in r.err, r.err
