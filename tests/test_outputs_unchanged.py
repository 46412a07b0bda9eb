"""`report --json`, `audit --json` and `brief --json` print the same bytes as before the read
model was rebuilt (issue 35): the benchmark ledgers (benchmarks/report.py, brief.py, audit.py,
at smaller sizes) are built with a fixed key, clock and ledger id, so every digest is the same
from run to run, and each command's output is compared with the one kept in
tests/data/outputs_before/ (made by the code before the change: `python
tests/test_outputs_unchanged.py` writes them again, for a change that means to alter them).

Each output is taken three ways, which must agree: with no state folder (checked in full),
and with one, first (the check in full that makes this machine's checked copy) and again
(the check carried on from that copy, which says so: only that sentence differs).
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
BEFORE = Path(__file__).parent / "data" / "outputs_before"
sys.path.insert(0, str(ROOT / "benchmarks"))


@contextlib.contextmanager
def fixed(mp: pytest.MonkeyPatch) -> Iterator[None]:
    """One key, one ledger id and a clock that ticks a second an entry, whatever the run."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    import logbook.ledger.service as service
    import logbook.ledger.writer as writer
    from logbook.crypto.signing import SigningKey

    seed = bytes(range(32))
    tick = itertools.count()
    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    with mp.context() as m:
        m.setattr(SigningKey, "generate",
                  classmethod(lambda cls: cls(Ed25519PrivateKey.from_private_bytes(seed))))
        m.setattr(service.uuidlib, "uuid4", lambda: uuid.UUID(int=35))
        m.setattr(writer, "now_rfc3339", lambda: (start + timedelta(seconds=next(tick)))
                  .strftime("%Y-%m-%dT%H:%M:%SZ"))
        yield


def build_report(folder: Path) -> None:
    import report as bench

    folder.mkdir()
    bench.build(folder, n_items=300)


def build_brief(folder: Path) -> None:
    import brief as bench

    folder.mkdir()
    bench.build(folder, plans=120, runs_per_arm=4)


def build_audit(folder: Path) -> None:
    import audit as bench

    from logbook.crypto.signing import SigningKey

    saved = bench.PLANS, bench.CLAIMS
    bench.PLANS, bench.CLAIMS = 80, 10
    try:
        with bench.build(folder, SigningKey.generate()) as _ledger:
            pass
    finally:
        bench.PLANS, bench.CLAIMS = saved


LEDGERS: dict[str, tuple[Callable[[Path], None], list[list[str]]]] = {
    "report": (build_report, [["report", "bench-plan", "--json"], ["audit", "--json"],
                              ["brief", "--json"]]),
    "brief": (build_brief, [["brief", "--json"], ["audit", "--json"],
                            ["report", "plan-3", "--json"], ["report", "plan-10", "--json"]]),
    "audit": (build_audit, [["audit", "--json"], ["brief", "--json"],
                            ["report", "bench-plan-00000", "--json"]]),
}


def name_of(args: list[str]) -> str:
    return "-".join(a.lstrip("-") for a in args)


def unresumed(text: str) -> object:
    """The output less what says how the check was made (in full, or carried on)."""
    import orjson

    def walk(v: object) -> object:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items() if not ("resumed_from" in v and k in (
                "checks", "signatures_checked", "resumed_from"))}
        return [walk(x) for x in v] if isinstance(v, list) else v

    return walk(orjson.loads(text))


def outputs(name: str, folder: Path, mp: pytest.MonkeyPatch) -> dict[str, str]:
    build, commands = LEDGERS[name]
    with fixed(mp):
        build(folder / "ledger")
    mp.setenv("LOGBOOK_DIR", str(folder / "ledger"))
    # the time `audit` records its findings at, which `brief` prints
    import logbook.ledger.entry as entry

    mp.setattr(entry, "now_rfc3339", lambda: "2026-02-03T04:05:06.000000Z")
    out: dict[str, str] = {}
    for i, args in enumerate(commands):
        seen = []
        for state in ("off", str(folder / f"state-{i}"), str(folder / f"state-{i}")):
            mp.setenv("LOGBOOK_STATE_DIR", state)
            r = run_cli(*args)
            assert r.code in (0, 1) and r.out, (args, state, r.err)
            seen.append(r.out)
        assert seen[0] == seen[1], f"{args}: with and without a state folder"
        assert unresumed(seen[2]) == unresumed(seen[0]), f"{args}: the resumed check"
        out[name_of(args)] = seen[0]
    return out


@pytest.mark.parametrize("name", sorted(LEDGERS))
def test_outputs_are_byte_identical(name: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    got = outputs(name, tmp_path, monkeypatch)
    for key, text in got.items():
        kept = BEFORE / f"{name}--{key}.json"
        assert kept.exists(), f"no output kept for {kept.name}"
        assert text == kept.read_text(encoding="utf-8"), f"{kept.name} differs from before"


if __name__ == "__main__":  # write the kept outputs again
    import tempfile

    BEFORE.mkdir(parents=True, exist_ok=True)
    for ledger in sorted(LEDGERS):
        with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
            for k, v in outputs(ledger, Path(tmp), mp).items():
                (BEFORE / f"{ledger}--{k}.json").write_text(v, encoding="utf-8")
