"""Committed items (docs/format.md, "Committed items"): the owner's side.

`commit_items` turns a run draft whose outcomes carry each row's private ``content`` into one
that carries, instead, each row's salted commitment (logbook.format.commitments); the salts and
the content go to the owner's salt file, never into the ledger. `open_rows` writes the openings
of the K rows a checkpoint's root chooses, with what a verifier needs besides the ledger's
public key: the run's signed entry, its inclusion proof in that checkpoint's tree, the signed
checkpoint itself (logbook.verify.openings checks them).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from logbook.errors import InputError
from logbook.format.commitments import SALT_BYTES, commitment, content_digest, rows_to_open

if TYPE_CHECKING:
    from logbook.ledger.service import Ledger

SALTS_LIMIT = 1 << 30  # a salt file: a line a committed run, its content included
OPENINGS_VERSION = 1


def commit_items(body: dict[str, Any], salts: Path) -> dict[str, Any]:
    """The run ``body`` with ``outcomes.content`` replaced by ``outcomes.commitment``, after
    its salts and content are appended (synced, private) to the salt file ``salts``. The rest
    of the draft is checked against the run model first: a draft refused leaves no line."""
    outcomes = body.get("outcomes")
    if not isinstance(outcomes, dict):
        raise InputError("--commit-items: the run has no outcomes to commit")
    ids, scores, content = outcomes.get("id"), outcomes.get("score"), outcomes.get("content")
    if not isinstance(ids, list) or not isinstance(scores, list) or len(ids) != len(scores):
        raise InputError("--commit-items: outcomes.id and outcomes.score must be lists of one "
                         "length")
    if not isinstance(content, list) or len(content) != len(ids) or not all(
            isinstance(c, str) for c in content):
        raise InputError(f"--commit-items: outcomes.content must hold each row's item content "
                         f"as text, {len(ids)} of them (what the commitments bind, kept only in "
                         "the salt file)")
    if "commitment" in outcomes:
        raise InputError("--commit-items: outcomes.commitment is made by logbook; remove it")
    if body.get("traces") is not None:
        raise InputError("--commit-items: traces: a run with committed items keeps no traces "
                         "(they would show what the commitments hide)")
    if not all(isinstance(i, str) for i in ids) or not all(
            s is None or (isinstance(s, int | float) and not isinstance(s, bool))
            for s in scores):
        raise InputError("--commit-items: outcomes.id must hold text and outcomes.score "
                         "numbers or null")
    _check_rest(body, outcomes)
    salt = [secrets.token_bytes(SALT_BYTES) for _ in ids]
    made = [commitment(s, i, content_digest(c), sc)
            for s, i, c, sc in zip(salt, ids, content, scores, strict=True)]
    _keep(salts, {"v": 1, "commitments": made, "salts": [s.hex() for s in salt],
                  "content": content})
    rest = {k: v for k, v in outcomes.items() if k != "content"}
    return {**body, "outcomes": {**rest, "commitment": made}}


def _check_rest(body: dict[str, Any], outcomes: dict[str, Any]) -> None:
    """The draft checked against the run model as it will be appended (its references, still
    slugs or prefixes here, stood in for by a digest), so that a refused draft keeps no salt."""
    from logbook.format.kinds import KINDS
    from logbook.model.validate import check_body

    probe = {**body, "outcomes": {k: v for k, v in outcomes.items() if k != "content"}}
    for ref in KINDS["run"].refs:
        if not ref.many and isinstance(ref.get(probe), str):
            probe = ref.put(probe, "0" * 64)
    check_body("run", probe)


def _keep(salts: Path, record: dict[str, Any]) -> None:
    """One line appended to the salt file, synced before the run is appended: a run whose
    salts were lost could never be opened."""
    line = orjson.dumps(record) + b"\n"
    try:
        fd = os.open(salts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        raise InputError(f"--commit-items {salts} cannot be written: {exc.strerror}") from None
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _salts_for(salts: Path, made: list[str]) -> dict[str, Any]:
    from logbook.reading import read_bytes

    data = read_bytes(salts, "--salts", limit=SALTS_LIMIT)
    for line in data.splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("commitments") == made:
            return record
    raise InputError(f"--salts {salts} holds no salts for this run's commitments (the file "
                     "`append --commit-items` wrote when the run was appended)")


def open_rows(ledger: Ledger, ref: str, k: int, salts: Path,
              checkpoint: tuple[str, str] | None) -> dict[str, Any]:
    """The openings document of the ``k`` rows of run ``ref`` that the checkpoint
    ``checkpoint`` (its name and note; None: the latest kept one that holds the run) chooses."""
    from logbook.ledger.checkpoints import inclusion_proof
    from logbook.tlog.checkpoint import parse_checkpoint
    from logbook.verify.proofs import origin_of
    from logbook.verify.tree import recomputed_tree

    run = ledger.get(ref)
    if run.kind != "run":
        raise InputError(f"RUN {ref}: entry @{run.seq} is a {run.kind}, not a run")
    made = (run.body.get("outcomes") or {}).get("commitment")
    if not made:
        raise InputError(f"RUN {ref}: run @{run.seq} has no committed items (its items are "
                         "shown in the clear)")
    if not 0 < k <= len(made):
        raise InputError(f"--items {k}: run @{run.seq} has {len(made)} committed rows; open 1 "
                         f"to {len(made)} of them")
    tree = recomputed_tree(ledger.entry_log)  # exit 1 when the stored tree disagrees
    if checkpoint is None:
        notes = [row[3] for row in ledger.entry_log.checkpoints() if row[1] > run.seq]
        if not notes:
            raise InputError(f"no checkpoint kept holds run @{run.seq}: make one after it "
                             "(`logbook checkpoint`) and publish it, or give --checkpoint FILE")
        name, note = "the first checkpoint that holds the run", notes[0]
    else:
        name, note = checkpoint
    cp = parse_checkpoint(note)[0]
    if cp.origin != origin_of(ledger.uuid):
        raise InputError(f"{name} is for {cp.origin}, not this ledger")
    if cp.size <= run.seq:
        raise InputError(f"{name} has size {cp.size}: it does not hold run @{run.seq}, so its "
                         "root cannot choose the rows")
    if cp.size > tree.size or tree.root(cp.size) != cp.root:
        raise InputError(f"{name} is not a checkpoint of this ledger's tree (its root at size "
                         f"{cp.size} differs)")
    kept = _salts_for(salts, list(made))
    rows = sorted(rows_to_open(cp.root, bytes.fromhex(run.digest), len(made), k))
    oc = run.body["outcomes"]
    proof = inclusion_proof(ledger, run.seq, cp.size, tree)
    return {"v": OPENINGS_VERSION, "ledger": ledger.uuid, "checkpoint": note,
            "run": {"seq": run.seq, "digest": run.digest, "signature": run.signature,
                    "entry": run.envelope},
            "proof": proof["path"], "k": k,
            "openings": [{"row": i, "id": oc["id"][i], "score": oc["score"][i],
                          "content": kept["content"][i], "salt": kept["salts"][i]}
                         for i in rows]}
