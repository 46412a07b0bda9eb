"""A witness asked at once, by many threads through two `logbook witness serve` processes
sharing one state file, to cosign two different checkpoints of one size (a fork) cosigns at
most one root (issue 19): the check and the update are one compare-and-swap under a lock."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import orjson
from running import log_vkey, post, request_body, running_witness, witness_key
from test_witness_server import checkpoint, grow, proof


def test_concurrent_forks_of_one_size_get_at_most_one_root_cosigned(ledger_dir: Path,
                                                                    tmp_path: Path) -> None:
    grow(ledger_dir, 3, "common")
    cps = tmp_path / "cps"
    cps.mkdir()
    base = checkpoint(cps / "base")
    copy = tmp_path / "copy"
    shutil.copytree(ledger_dir / ".logbook", copy / ".logbook")
    vkey = log_vkey()
    grow(ledger_dir, 3, "real")
    grow(copy, 3, "forged", ledger=copy)
    real, forged = checkpoint(cps / "real"), checkpoint(cps / "forged", copy)
    bodies = {"real": request_body(4, proof(cps / "base", cps / "real"), real),
              "forged": request_body(4, proof(cps / "base", cps / "forged", copy), forged)}
    key = witness_key(tmp_path / "keys", "w1")
    state = tmp_path / "w1.state"
    with running_witness(key, [vkey], state) as a, running_witness(key, [vkey], state) as b:
        assert post(a.url, request_body(0, [], base))[0] == 200
        answers: list[tuple[str, int]] = []
        start = threading.Barrier(16)

        def submit(i: int) -> None:
            which = "real" if i % 2 else "forged"
            url = (a, b)[(i // 2) % 2].url
            start.wait()
            answers.append((which, post(url, bodies[which])[0]))

        threads = [threading.Thread(target=submit, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(answers) == 16
    cosigned = [which for which, status in answers if status == 200]
    assert len(cosigned) == 1, answers  # one request won; every other one was stale (409)
    assert all(status == 409 for _, status in answers if status != 200)
    held = orjson.loads(state.read_bytes())["logs"][vkey.split("+")[0]]
    assert held["note"] == (real if cosigned[0] == "real" else forged)
