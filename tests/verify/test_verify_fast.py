"""verify at the signature limit (issue 22): each shortcut the scan takes must answer exactly
what the plain check answers. The signature Checker gives verify_signature's answer (and the
cryptography package's) on every way a signature can be wrong; the worker processes report
exactly the signatures that fail; the derived windows and the tree levels, compared whole
first, find what the row by row comparison finds on any damage; the packed kinds index finds
every entry a dict finds, and nothing else."""

from __future__ import annotations

import base64
import pickle
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_cli

from logbook.crypto.points import L, small_order_encodings
from logbook.crypto.public import verify_signature, verify_signature_reference
from logbook.errors import StorageDamaged
from logbook.format.canonical import SIGNATURE_DOMAIN
from logbook.tlog import merkle
from logbook.verify import derived, signatures
from logbook.verify.derived import Digests, KindIndex, StreamedTable, check_tree, entry_of


def _signed() -> list[tuple[bytes, bytes, bytes]]:
    """(key, signature, message) of every entry of a real ledger."""
    for i in range(4):
        assert run_cli("note", f"finding {i}").code == 0
    lines = [orjson.loads(line) for line in run_cli("export").out.splitlines()]
    keys = {line["entry"]["signer"]: base64.b64decode(k["public"])
            for line in lines for k in line["entry"]["body"].get("keys") or []}
    return [(keys[line["entry"]["signer"]], base64.b64decode(line["signature"]),
             SIGNATURE_DOMAIN + bytes.fromhex(line["digest"])) for line in lines]


def _variants(pub: bytes, sig: bytes, msg: bytes) -> Iterator[tuple[bytes, bytes, bytes]]:
    yield pub, sig, msg
    for i in range(0, 64, 5):  # a bit flipped in R and in S
        bad = bytearray(sig)
        bad[i] ^= 1 << (i % 8)
        yield pub, bytes(bad), msg
    s = int.from_bytes(sig[32:], "little")
    if s + L < 2**256:
        yield pub, sig[:32] + (s + L).to_bytes(32, "little"), msg  # S not reduced
    for point in sorted(small_order_encodings()):
        yield pub, point + sig[32:], msg  # small-order R
        yield point, sig, msg  # small-order key
    y = int.from_bytes(pub, "little") & ((1 << 255) - 1)
    if y + 2**255 - 19 < 2**255:
        yield (y + 2**255 - 19).to_bytes(32, "little"), sig, msg  # non-canonical key
    yield from ((pub, sig, msg[:-1] + bytes([msg[-1] ^ 1])), (pub, sig, msg[-32:]),
                (pub, bytes(64), msg), (pub, sig[:63], msg), (pub, sig + b"\0", msg),
                (pub[:31], sig, msg), (bytes(32), sig, msg), (pub, sig, msg * 9))


def test_the_checker_answers_as_verify_signature_and_the_reference(ledger_dir: Path) -> None:
    check = signatures.Checker()
    cases = [v for entry in _signed() for v in _variants(*entry)]
    answers = [check(*c) for c in cases]
    assert answers == [verify_signature(*c) for c in cases]
    assert answers == [verify_signature_reference(*c) for c in cases]
    assert sum(answers) == 5 and len(cases) > 5 * 40  # each entry as signed, nothing else
    assert check(*cases[0]) and check(*cases[0])  # the key's checks kept: the same answer


def test_the_workers_report_exactly_the_signatures_that_fail(
        ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signatures, "CHUNK", 4)  # many chunks, answered out of turn
    monkeypatch.setattr(signatures, "workers", lambda: 2)
    signed = _signed()
    batch = signatures.SignatureBatch()
    bad = set()
    for i in range(61):
        key, sig, msg = signed[i % len(signed)]
        if i % 7 == 3:
            sig, msg = sig, msg[:-1] + bytes([msg[-1] ^ 4])
            bad.add(i)
        batch.add(i, f"d{i}", key, sig, msg)
    assert batch.failures() == [(i, f"d{i}") for i in sorted(bad)]
    assert batch._procs == []  # the workers are stopped


def _rows(n: int) -> list[tuple[Any, ...]]:
    return [(i, "acc", 3, i % 2, float(i), b"{}") for i in range(n)]


def _scenario(rng: random.Random) -> tuple[list[tuple[Any, ...]], list[Any]]:
    """Rows the entries make, and the stored rows after random damage."""
    made = _rows(40)
    stored: list[Any] = list(made)
    for _ in range(rng.randrange(4)):
        what = rng.choice(["alter", "delete", "extra", "dup", "text key", "moved", "list"])
        i = rng.randrange(len(stored))
        if what == "alter":
            stored[i] = (*stored[i][:4], -1.0, b"{}")
        elif what == "delete":
            del stored[i]
        elif what == "extra":
            stored.insert(i, (stored[i][0], "x", 0, 0, 0.0, b""))
        elif what == "dup":
            stored.insert(i, stored[i])
        elif what == "text key":
            stored.append(("7", "acc", 3, 0, 7.0, b"{}"))
        elif what == "moved":
            stored[i] = (5000, *stored[i][1:])
        else:
            stored[i] = list(stored[i])
    stored.sort(key=lambda r: (type(r[0]) is str, r[0]))  # as the store orders them
    return made, stored


def _compare(made: list[tuple[Any, ...]], stored: list[Any], window: int,
             fail_at: int | None) -> list[Any]:
    def read() -> Iterator[Any]:
        for n, row in enumerate(stored):
            if n == fail_at:
                raise StorageDamaged("the table is gone")
            yield row

    table = StreamedTable("outcomes", read, entry_of, Digests())
    for i, row in enumerate(made):
        table.add(row)
        if (i + 1) % window == 0:
            table.flush(i)
    table.flush(None)
    return [(f.check, f.message, f.seq) for f in table.findings]


@pytest.mark.parametrize("seed", range(60))
def test_a_window_compared_whole_finds_what_row_by_row_finds(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    made, stored = _scenario(rng)
    window = rng.choice([1, 3, 8, 40])
    fail_at = rng.choice([None, None, rng.randrange(len(stored) + 1)])
    fast = _compare(made, stored, window, fail_at)
    monkeypatch.setattr(StreamedTable, "_same", lambda self, upto: False)
    assert fast == _compare(made, stored, window, fail_at)


@pytest.mark.parametrize("seed", range(43))
def test_a_tree_compared_in_blocks_finds_what_row_by_row_finds(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    leaves = [rng.randbytes(32) for _ in range(rng.randrange(1, 70) if seed < 40 else 9)]
    digests = Digests()
    for d in leaves:
        digests.append(d)
    stored: list[Any] = [n for n in merkle.all_nodes(leaves) if n[0] > 0]
    if seed >= 40:  # the last node of a level stored twice: compared twice, no finding
        last = max(i for i, n in enumerate(stored) if n[0] == seed - 39)
        stored.insert(last, stored[last])
    for _ in range(rng.randrange(4) if stored and seed < 40 else 0):
        i = rng.randrange(len(stored))
        lv, ix, h = stored[i]
        what = rng.choice(["alter", "delete", "dup", "extra", "text", "bool"])
        if what == "alter":
            stored[i] = (lv, ix, bytes(32))
        elif what == "delete":
            del stored[i]
        elif what == "dup":
            stored.insert(i, stored[i])
        elif what == "extra":
            stored.insert(i + 1, (lv, ix + 1000, h))
        elif what == "text":
            stored[i] = (lv, ix, h.hex())
        else:
            stored[i] = (True, ix, h) if lv == 1 else (lv, ix, h[:31])
    wanted = {(lv, ix) for lv, ix, _h in merkle.all_nodes(leaves)}
    answers = []
    for block in (1, 2, 5, 4096, 10**9):  # 10**9 with no fast path: row by row throughout
        monkeypatch.setattr(derived, "TREE_BLOCK", block)
        if block == 10**9:
            monkeypatch.setattr(derived, "_same_nodes", lambda *a: False)
        found, kept = check_tree(stored, digests, wanted)
        answers.append(([(f.check, f.message, f.seq, f.entries) for f in found], kept))
    assert all(a == answers[-1] for a in answers), seed
    assert seed < 40 or answers[-1][0] == []


def test_packed_kinds_find_every_entry_and_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "BUCKETS", 1)  # one bucket: records side by side
    rng = random.Random(7)
    kinds = KindIndex()
    truth = {}
    for i in range(40):
        digest = rng.randbytes(32)
        kind = ("note", "run", "plan", "strange-kind")[i % 4]
        kinds[digest] = kind
        truth[digest] = kind
    kinds[digest] = "note"  # the same bytes again change nothing
    assert len(kinds) == len(truth) == 40
    assert {d: kinds.get(d) for d in truth} == truth
    assert dict(kinds.items()) == truth and kinds[digest] == truth[digest]
    records = bytes(kinds._buckets[0] or b"")
    straddling = records[5:37]  # the tail of one record, its kind's byte, the next's head
    assert kinds.get(straddling) is None and straddling not in kinds
    assert kinds.get(b"short") is None and kinds.get(rng.randbytes(32)) is None
    with pytest.raises(KeyError):
        kinds[rng.randbytes(32)]
    again = pickle.loads(pickle.dumps(kinds))  # rebuilt by digest, not by bucket
    assert {d: again.get(d) for d in truth} == truth


def test_a_ledger_verifies_alike_with_the_kinds_packed(ledger_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    plan = run_cli("note", "the plan")
    assert plan.code == 0
    first = run_cli("log", "--json").json
    for i in range(6):  # notes naming earlier entries: each is found by the packed index
        assert run_cli("note", f"see {i}", "--ref", first[-1]["digest"]).code == 0
    dict_kinds = run_cli("verify", "--json")
    monkeypatch.setattr(KindIndex, "pack_at", 2)
    packed = run_cli("verify", "--json")
    assert dict_kinds.code == packed.code == 0, packed.out
    assert packed.json == dict_kinds.json


def test_packed_kinds_take_half_the_memory_of_a_dict() -> None:
    """At the size the chain packs them (KindIndex.pack_at), about 55 bytes an entry where a
    dict of its own digests (as the chain held them) takes about 105: what keeps verify's
    memory flat at 1M entries."""
    import tracemalloc

    rng = random.Random(3)
    digests = [rng.randbytes(32) for _ in range(KindIndex.pack_at)]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        plain = {bytes(bytearray(d)): "note" for d in digests}  # each key its own object
        as_dict = tracemalloc.get_traced_memory()[0] - start
        del plain
        start = tracemalloc.get_traced_memory()[0]
        packed = KindIndex()
        for d in digests:
            packed[d] = "note"
        as_packed = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(packed) == len(digests) and packed.get(digests[-1]) == "note"
    assert as_packed / len(digests) < 60 and as_packed < 0.6 * as_dict, (as_packed, as_dict)
