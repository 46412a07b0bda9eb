"""`logbook export --format in-toto`: each plan's verdict, and each claim on a plan, as signed
in-toto attestations, one DSSE envelope a line (the `.intoto.jsonl` convention).

Each verdict or claim gives two envelopes, each an in-toto Statement v1:

- the published Test Result predicate (https://in-toto.io/attestation/test-result/v0.1):
  `result` PASSED when the verdict is success, FAILED otherwise; every pre-registered
  condition a test named by its stat, operator and value, passed when it holds;
- the eval-result predicate proposed in in-toto/attestation#575 (its proposed type URI,
  https://in-toto.io/attestation/eval-result/v0.1): the plan's success conditions as claims
  (metric, comparator, threshold as a decimal string, passed), the sample size, the plan's own
  digest as the pre-registration, the ledger's tree root as the receipt, and
  `assuranceLevel` (self_attested, or reproduced when other signers reproduced the runs).

The subject is the model the runs evaluated, by name and recorded digest; when a counted run's
model has no recorded digest the subject is the logbook entry itself (the proposal's
`receipt` profile), and the model's name is in the configuration. The envelope is signed with
the ledger key (Ed25519) over DSSE's pre-authentication encoding; its keyid is the key's
fingerprint (`logbook keys list`). docs/exports.md gives the field-by-field mapping.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from logbook.analysis.retractions import verdict_of
from logbook.analysis.view import PlanView, RunView
from logbook.exports import Exporter
from logbook.exports.selection import Selection
from logbook.files import atomic_writer
from logbook.format.canonical import canonical_bytes

STATEMENT = "https://in-toto.io/Statement/v1"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"
EVAL_RESULT = "https://in-toto.io/attestation/eval-result/v0.1"  # proposed (#575)
PAYLOAD_TYPE = "application/vnd.in-toto+json"
DECIDED = ("success", "failure", "inconclusive")  # an incomplete plan has no verdict yet


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def envelope(statement: dict[str, Any], key: Any) -> dict[str, Any]:
    payload = canonical_bytes(statement)
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": key.public.fingerprint,
                            "sig": base64.b64encode(signature).decode()}]}


def _hex(value: Any) -> str | None:
    """A recorded digest as bare lowercase hex (sha256, or a 40-digit git revision)."""
    if not isinstance(value, str):
        return None
    text = value.lower().removeprefix("sha256:")
    return text if re.fullmatch(r"[0-9a-f]{64}|[0-9a-f]{40}", text) else None


def _digest_set(value: Any) -> dict[str, str] | None:
    """An in-toto DigestSet of a recorded digest; a 40-digit one is a Hugging Face revision,
    as lm-eval records it."""
    text = _hex(value)
    if text is None:
        return None
    return {"sha256": text} if len(text) == 64 else {"gitCommit": text}


def _counted(plan: PlanView) -> list[RunView]:
    return [r for r in plan.runs if not r.retracted and r.status == "completed"]


def _subjects(sel: Selection, plan: PlanView, entry: str) -> tuple[list[dict[str, Any]], str]:
    models: dict[str, dict[str, str] | None] = {}
    for run in _counted(plan):
        apparatus = run.apparatus
        name = str(apparatus.get("model"))
        models.setdefault(name, _digest_set(apparatus.get("model_digest")))
    if models and all(d is not None for d in models.values()):
        return [{"name": name, "digest": digest}
                for name, digest in sorted(models.items())], "public-model"
    return [{"name": f"{sel.origin}/{entry}", "digest": {"sha256": entry}}], "receipt"


def _commitments(counted: list[RunView]) -> dict[str, Any]:
    """The model's and the dataset's recorded digests (unsalted: logbook keeps no secret
    identities), each only when every counted run records the same one."""
    out: dict[str, Any] = {}
    for what, field in (("model", "model_digest"), ("dataset", "dataset_hash")):
        values = {_hex(r.apparatus.get(field)) for r in counted}
        if len(values) == 1 and (value := values.pop()) is not None:
            (alg, _), = _digest_set(value).items()  # type: ignore[union-attr]
            out[what] = {"alg": alg, "value": value, "salted": False}
    return out


def _descriptor(sel: Selection, what: str, digest: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": what, "digest": {"sha256": digest}}
    url = sel.url_of(digest)
    if url is not None:
        out["uri"] = url
    return out


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _assurance(sel: Selection, plan: PlanView, counted: list[RunView]) -> str:
    """`reproduced` when every arm has a counted run that another signer reproduced in
    agreement and no reproduction of a counted run disagrees (logbook.analysis
    .reproductions, at the plan's confidence); else `self_attested`."""
    from logbook.analysis.reproductions import reproductions

    confidence = 1 - float(plan.body.get("alpha", 0.05))
    found = reproductions(sel.view, counted, confidence)
    agreeing = {x.original.arm for x in found if x.independent and x.agrees}
    arms = {r.arm for r in counted}
    if arms and arms <= agreeing and not any(x.agrees is False for x in found):
        return "reproduced"
    return "self_attested"


def _arm(condition: Any) -> str | None:
    arm = condition.arm
    return arm if isinstance(arm, str) else None  # ABSENT when the criterion names no arm


def _criterion(plan: PlanView, c: Any, negated: str = "") -> str:
    arm = f" ({_arm(c)})" if _arm(c) else ""
    return f"{plan.slug}: {negated}{c.stat}{arm} {c.op} {_number(c.value)}"


def statements(sel: Selection, plan: PlanView, verdict: Any,
               claim: Any = None) -> list[dict[str, Any]]:
    """The two statements (Test Result, eval-result) of a plan's verdict, or of a claim on it."""
    body = plan.body
    entry = claim.digest if claim is not None else plan.digest
    subjects, profile = _subjects(sel, plan, entry)
    # a test per pre-registered criterion: a success condition passes when it holds, a
    # failure condition when it does not (a criterion that cannot be judged has not passed)
    tests = [(_criterion(plan, c), c.holds is True) for c in verdict.success] + [
        (_criterion(plan, c, "not "), c.holds is False) for c in verdict.failure]
    holding = [name for name, ok in tests if ok]
    not_holding = [name for name, ok in tests if not ok]
    counted = _counted(plan)
    models = sorted({str(r.apparatus.get("model")) for r in counted})
    configuration = [{**_descriptor(sel, f"logbook plan {plan.slug}", plan.digest),
                      "annotations": {"verdict": verdict.status, "models": models,
                                      "ledger": sel.origin, "ledgerSize": sel.size,
                                      "ledgerRoot": sel.root}}]
    if claim is not None:
        configuration.append({**_descriptor(sel, "logbook claim", claim.digest),
                              "annotations": {"statement": str(claim.body.get("statement"))}})
    test_result: dict[str, Any] = {
        "result": "PASSED" if verdict.status == "success" else "FAILED",
        "configuration": configuration,
        "passedTests": holding, "failedTests": not_holding, "warnedTests": []}
    url = sel.url_of(entry)
    if url is not None:
        test_result["url"] = url
    suite = body.get("suite") or {}
    metric = str((body.get("metric") or {}).get("name"))
    n_items = suite.get("n_items") or max((r.missing(None)[1] for r in counted), default=0)
    eval_result: dict[str, Any] = {
        "verifier": {"id": f"urn:logbook:{sel.origin}"},
        "evaluatedAt": max((str(r.entry.envelope.get("ts")) for r in counted),
                           default=str(plan.entry.envelope.get("ts"))),
        "suite": {"name": str(suite.get("name")), "version": str(suite.get("version"))},
        "claims": [{"metric": f"{metric}.{c.stat}" + (f"[{_arm(c)}]" if _arm(c) else ""),
                    "comparator": c.op, "threshold": _number(c.value),
                    "passed": bool(c.holds)} for c in verdict.success],
        "sampleSize": int(n_items),
        "commitments": _commitments(counted),
        "assuranceLevel": _assurance(sel, plan, counted),
        "subjectProfile": profile,
        "preRegistration": {"alg": "sha256", "value": plan.digest},
        "receipt": {"schema": "logbook/tlog-checkpoint",
                    "merkleRootB64": base64.b64encode(bytes.fromhex(sel.root)).decode()},
    }
    first = counted[0].apparatus if counted else {}
    if first.get("harness.name") is not None:
        eval_result["harness"] = {k: str(first[f"harness.{k}"]) for k in ("name", "version")
                                  if first.get(f"harness.{k}") is not None}
    return [{"_type": STATEMENT, "subject": subjects, "predicateType": kind, "predicate": pred}
            for kind, pred in ((TEST_RESULT, test_result), (EVAL_RESULT, eval_result))]


def write(sel: Selection, out: Any, options: dict[str, Any]) -> str:
    key = options["key"]
    lines: list[bytes] = []
    verdicts = {p.digest: (p, verdict_of(p)) for p in sel.plans}
    decided = {d: pv for d, pv in verdicts.items() if pv[1].status in DECIDED}
    for plan, verdict in decided.values():
        lines += (canonical_bytes(envelope(s, key)) for s in statements(sel, plan, verdict))
    claims = 0
    for claim in sel.view.entries_of("claim"):
        found = decided.get(str(claim.body.get("plan")))
        if found is not None and not sel.view.retracted_by(claim.digest):
            lines += (canonical_bytes(envelope(s, key))
                      for s in statements(sel, *found, claim))
            claims += 1
    data = b"".join(line + b"\n" for line in lines)
    if isinstance(out, str):
        with atomic_writer(out, "--out") as dest:
            dest.write_bytes(data)
    else:
        out.write(data)
        out.flush()
    return (f"{len(lines)} envelopes ({len(decided)} plan verdicts, {claims} claims; "
            f"{len(sel.plans) - len(decided)} plans without a verdict yet)")


EXPORTER = Exporter(name="in-toto", summary="each plan verdict and claim as signed in-toto "
                    "statements (Test Result, and the proposed eval-result), DSSE envelopes, "
                    "one a line", writes="file", text=True, needs=(), extra=None, write=write,
                    signs=True)
