"""The audit on stamped times (issue 39, item 2): A31, a backfilled stamp that contradicts the
plan's order, and A32, a plan no stamp anchors, in a ledger that stamps. The ledgers are built
with the public commands; each stamp is a real RFC 3161 answer (the calibration's throwaway
authority, at a clock the test sets), appended as a `timestamp` draft, as `logbook checkpoint
--timestamp` appends a TSA's answer."""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from typing import Any

from builders import draft, plan_body, run_body, write_json
from conftest import run_cli
from test_audit import documented

from logbook.calibration.tsa import Authority
from logbook.tlog.checkpoint import body_text, parse_checkpoint


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def stamp(work: Path, note: str, minute: int) -> None:
    """The checkpoint ``note`` stamped at 00:MM on 2026-01-01 by the throwaway authority."""
    cp = parse_checkpoint(note)[0]
    when = datetime.datetime(2026, 1, 1, 0, minute, tzinfo=datetime.UTC)
    answer = Authority(b"test").answer(body_text(cp), when, minute)
    body = {"size": cp.size, "root": cp.root.hex(), "tsa": "https://tsa.example/",
            "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "response": base64.b64encode(answer).decode()}
    ok("append", str(write_json(work / f"stamp-{minute}.json", draft("timestamp", body))))


def plan_and_runs(work: Path, anchor: bool) -> str | None:
    """Plan kv, its anchoring checkpoint (returned) when ``anchor``, and one run an arm."""
    ok("plan", str(write_json(work / "kv.json", plan_body("kv", runs_per_arm=1))))
    note = ok("checkpoint") if anchor else None
    for arm, seed in (("f16", 1), ("q8", 2)):
        ok("append", str(write_json(work / f"{arm}.json", draft("run", run_body("kv", arm,
                                                                                seed=seed)))))
    return note


def findings(rule: str) -> list[dict[str, Any]]:
    r = run_cli("audit", "--only", rule, "--json")
    assert r.code in (0, 1), r.err
    return list(r.json["findings"])


def test_a31_a_backfilled_stamp_is_an_error(ledger_dir: Path) -> None:
    anchor = plan_and_runs(ledger_dir, anchor=True)
    assert anchor is not None
    stamp(ledger_dir, ok("checkpoint"), 1)  # the runs' checkpoint, stamped first
    stamp(ledger_dir, anchor, 2)  # the plan's, stamped only afterwards
    [f] = findings("A31")
    assert f["severity"] == "error" and "stamped after one that already holds" in f["message"]
    documented(f)
    assert findings("A32") == []


def test_a32_a_plan_stamped_only_after_its_runs(ledger_dir: Path) -> None:
    plan_and_runs(ledger_dir, anchor=False)
    stamp(ledger_dir, ok("checkpoint"), 1)
    [f] = findings("A32")
    assert f["severity"] == "info"
    documented(f)
    assert findings("A31") == []


def test_stamps_in_order_are_quiet(ledger_dir: Path) -> None:
    anchor = plan_and_runs(ledger_dir, anchor=True)
    assert anchor is not None
    stamp(ledger_dir, anchor, 1)
    stamp(ledger_dir, ok("checkpoint"), 2)
    assert findings("A31") == [] and findings("A32") == []


def test_a_ledger_that_never_stamps_is_not_told_about_stamps(ledger_dir: Path) -> None:
    plan_and_runs(ledger_dir, anchor=False)
    assert findings("A31") == [] and findings("A32") == []


def test_the_throwaway_authority_answers_as_a_tsa(tmp_path: Path) -> None:
    """Its answers parse and verify with rfc3161-client under its own certificate, stamp
    the message asked, and are the same bytes each time (deterministic ECDSA)."""
    import rfc3161_client
    from cryptography import x509

    authority = Authority(b"test")
    when = datetime.datetime(2026, 1, 1, 0, 5, tzinfo=datetime.UTC)
    answer = authority.answer(b"a checkpoint body\n", when, 5)
    assert answer == Authority(b"test").answer(b"a checkpoint body\n", when, 5)
    resp = rfc3161_client.decode_timestamp_response(answer)
    assert resp.tst_info.gen_time == when and resp.tst_info.serial_number == 5
    root = x509.load_der_x509_certificate(authority.certificate)
    verifier = rfc3161_client.VerifierBuilder().add_root_certificate(root).build()
    assert verifier.verify_message(resp, b"a checkpoint body\n")
    other = rfc3161_client.VerifierBuilder().add_root_certificate(
        x509.load_der_x509_certificate(Authority(b"another").certificate)).build()
    try:
        other.verify_message(resp, b"a checkpoint body\n")
    except rfc3161_client.VerificationError:
        pass
    else:
        raise AssertionError("an answer verified under another authority's certificate")
