"""Requested versus applied (issue 36 item 8): `logbook run --log` and `append --from ... --log`
read an engine's load log (tests/fixtures/load_logs: llama-server, an older llama-cli, vLLM
V1 and an older vLLM, an unknown engine) into the run's `apparatus.applied`, and audit rule A38
names each setting applied otherwise than the run or its plan's pins requested.

`logbook run` spawns its command, so it runs as a subprocess (``python -m logbook``); the rest
goes through the in-process ``run_cli``."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_json, write_jsonl
from conftest import run_cli
from test_audit import documented

from logbook.capture.loadlogs import HEAD_BYTES, applied

LOGS = Path(__file__).parents[1] / "fixtures" / "load_logs"
PY = sys.executable


def lb(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`logbook ARGS` as a separate process, as a shell would run it."""
    return subprocess.run([PY, "-m", "logbook", *map(str, args)], cwd=cwd, timeout=120,
                          env=dict(os.environ), capture_output=True, text=True, check=False)


def ok(*args: object) -> str:
    r = run_cli(*map(str, args))
    assert r.code == 0, r.err
    return r.out


def exported() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in ok("export").splitlines()]


def runs() -> list[dict[str, Any]]:
    return [e["entry"]["body"] for e in exported() if e["entry"]["kind"] == "run"]


def findings(*more: str) -> list[dict[str, Any]]:
    r = run_cli("audit", "--only", "A38", "--json", *more)
    assert r.code in (0, 1), r.err
    return list(r.json["findings"])


def make_plan(work: Path, **extra: Any) -> None:
    body = plan_body("kv", runs_per_arm=2, n_items=6)
    ok("plan", write_json(work / "kv.json", {**body, **extra}))


def writer(n: int = 6) -> list[str]:
    """A command that writes ``n`` scored items to items.jsonl, as an evaluation would."""
    code = ("import json\nwith open('items.jsonl', 'w') as f:\n"
            f"    for i in range({n}): f.write(json.dumps({{'id': i, 'score': i % 2}}) + '\\n')\n")
    return [PY, "-c", code]


said_on_stderr: list[str] = []  # what each `logbook run` of recorded() said


def recorded(work: Path, log: str, apparatus: dict[str, Any], arm: str = "q8") -> dict[str, Any]:
    """`logbook run --plan kv --arm ARM --apparatus ... --log LOG -- CMD`: the run's body."""
    shutil.copyfile(LOGS / log, work / log)
    write_json(work / "app.json", {"model": "m-7b", "decoding": {"temperature": 0.0},
                                   "kv_cache_precision": arm, **apparatus})
    r = lb("run", "--plan", "kv", "--arm", arm, "--outcomes", "items.jsonl", "--apparatus",
           "app.json", "--log", log, "--", *writer(), cwd=work)
    assert r.returncode == 0, r.stderr
    said_on_stderr.append(r.stderr)
    return runs()[-1]


# -- the readers ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("log", "want"), [
    ("llama_server.log", {"engine": "llama.cpp", "context": 4096, "kv_cache": "q8_0",
                          "gpu_layers": 33, "layers": 33, "weights": "Q4_K_M", "batch": 2048,
                          "flash_attn": True}),
    ("llama_cli_old.log", {"engine": "llama.cpp", "context": 8192, "kv_cache": "f16",
                           "gpu_layers": 20, "layers": 33, "weights": "Q8_0", "batch": 512,
                           "flash_attn": False}),
    ("vllm_serve.log", {"engine": "vllm", "precision": "bfloat16", "context": 8192,
                        "tensor_parallel": 1, "quantization": None, "enforce_eager": False,
                        "kv_cache": "fp8", "weights": "bfloat16"}),
    ("vllm_old.log", {"engine": "vllm", "precision": "float16", "context": 4096,
                      "tensor_parallel": 2, "quantization": "awq", "enforce_eager": True,
                      "kv_cache": "float16", "weights": "awq"}),
    ("unknown_engine.log", None),
])
def test_each_engine_s_load_lines_are_read(log: str, want: dict[str, Any] | None) -> None:
    assert applied((LOGS / log).read_bytes()) == want


def test_a_garbled_or_binary_log_is_no_engine_s() -> None:
    rng = random.Random(5)
    noise = bytes(rng.randrange(256) for _ in range(200_000))
    assert applied(noise) is None
    assert applied(noise.replace(b"\0", b"\1")) is None
    # bytes that are not UTF-8 among the load lines: the lines are still read
    latin = b"caf\xe9 \xff\xfe\n" + (LOGS / "llama_server.log").read_bytes()
    assert (applied(latin) or {}).get("context") == 4096


def test_only_the_head_of_a_huge_log_is_read() -> None:
    load = (LOGS / "llama_server.log").read_bytes()
    noise = b"srv  log_server_r: request: POST /v1/completions 127.0.0.1 200\n"
    grown = load + noise * (3 * HEAD_BYTES // len(noise))  # a server's log, days later
    assert (applied(grown) or {}).get("kv_cache") == "q8_0"
    late = noise * (HEAD_BYTES // len(noise) + 1) + load  # load lines past the bound
    assert applied(late) is None
    one_line = b"x" * (2 * HEAD_BYTES)  # no line ends at all
    assert applied(one_line) is None


# -- logbook run --log ---------------------------------------------------------------------------
def test_a_load_log_that_agrees_is_recorded_and_finds_nothing(ledger_dir: Path) -> None:
    make_plan(ledger_dir)
    run = recorded(ledger_dir, "llama_server.log", {"n_ctx": 4096, "n_gpu_layers": 99,
                                                     "flags": {"flash_attn": "on"}})
    assert run["apparatus"]["applied"] == {
        "engine": "llama.cpp", "log": "llama_server.log", "context": 4096, "kv_cache": "q8_0",
        "gpu_layers": 33, "layers": 33, "weights": "Q4_K_M", "batch": 2048, "flash_attn": True}
    # the command printed nothing: its own output is no log
    assert [ref["name"] for ref in run["logs"]] == ["llama_server.log"]
    assert findings() == []


def test_a_load_log_that_disagrees_is_an_a38_finding(ledger_dir: Path) -> None:
    make_plan(ledger_dir)
    recorded(ledger_dir, "llama_server.log", {"n_ctx": 8192, "n_gpu_layers": 99})  # @2
    assert ("warning: run @2 requested context 8192 (n_ctx) but the llama.cpp load log "
            "llama_server.log shows 4096 applied (audit A38)") in said_on_stderr[-1]
    recorded(ledger_dir, "llama_cli_old.log", {"ctx_size": 8192, "n_gpu_layers": -1},
             arm="f16")  # @3: all layers asked, 20 of 33 given
    f1, f2 = findings()
    assert f1["message"] == ("plan kv: run @2 requested context 8192 (n_ctx) but the "
                             "llama.cpp load log llama_server.log shows 4096 applied")
    assert f1["severity"] == "warning" and f1["seq"] == 2
    assert f2["message"] == ("plan kv: run @3 requested gpu_layers -1 (n_gpu_layers) but the "
                             "llama.cpp load log llama_cli_old.log shows 20 applied")
    documented(f1)
    text = run_cli("audit")
    assert "run @2 requested context 8192 (n_ctx)" in text.out


def test_an_unknown_engine_s_log_is_kept_and_applies_nothing(ledger_dir: Path) -> None:
    make_plan(ledger_dir)
    run = recorded(ledger_dir, "unknown_engine.log", {"n_ctx": 8192})
    assert "applied" not in run["apparatus"]
    assert [ref["name"] for ref in run["logs"]] == ["unknown_engine.log"]
    assert findings() == []


# -- append --from ... --log, and the plan's pins -------------------------------------------------
def test_append_from_reads_the_log_and_the_plan_s_pins_are_requested(ledger_dir: Path) -> None:
    make_plan(ledger_dir, arms=[{"name": "f16", "role": "control",
                                 "apparatus": {"kv_cache_precision": "f16"}},
                                {"name": "fp8", "role": "treatment",
                                 "apparatus": {"kv_cache_precision": "fp8"}}],
              pinned={"max_model_len": 8192, "dtype": "bfloat16"})
    write_jsonl(ledger_dir / "items.jsonl", [{"id": i, "score": i % 2} for i in range(6)])
    shutil.copyfile(LOGS / "vllm_serve.log", ledger_dir / "vllm_serve.log")
    ok("append", "--from", "jsonl", "items.jsonl", "--plan", "kv", "--arm", "fp8",
       "--log", "vllm_serve.log")  # @2: agrees with the pins (bfloat16 spelled torch's way)
    ok("append", "--from", "jsonl", "items.jsonl", "--plan", "kv", "--arm", "f16",
       "--log", "vllm_serve.log")  # @3: its arm pins an f16 cache; the log shows fp8
    body = runs()[0]
    assert body["apparatus"]["applied"]["engine"] == "vllm"
    assert [ref["name"] for ref in body["logs"]] == ["vllm_serve.log"]
    [f] = findings()
    assert f["message"] == ("plan kv: run @3 requested kv_cache f16 (kv_cache_precision) but "
                            "the vllm load log vllm_serve.log shows fp8 applied")
    r = run_cli("append", "--from", "jsonl", "items.jsonl", "--plan", "kv", "--arm", "f16",
                "--log", "vllm_serve.log", "--session", "again")  # said as it is appended
    assert r.code == 0 and "requested kv_cache f16 (kv_cache_precision)" in r.err, r.err
    r = run_cli("audit", "--json")
    assert f in r.json["findings"]


def test_applied_beside_the_variable_is_no_confound(ledger_dir: Path) -> None:
    """The arms' caches differ as declared: applied.kv_cache restates the variable, and is
    not a second confound (A06) beside it; what else the two engines applied otherwise (the
    weights' format) is one."""
    make_plan(ledger_dir)
    write_jsonl(ledger_dir / "items.jsonl", [{"id": i, "score": i % 2} for i in range(6)])
    for arm, log in (("q8", "llama_server.log"), ("f16", "llama_cli_old.log")):
        shutil.copyfile(LOGS / log, ledger_dir / log)
        write_json(ledger_dir / "app.json", {"model": "m-7b", "kv_cache_precision": arm})
        ok("append", "--from", "jsonl", "items.jsonl", "--plan", "kv", "--arm", arm,
           "--apparatus", "app.json", "--log", log)
    r = run_cli("audit", "--only", "A06", "--json")
    [f] = r.json["findings"]
    assert "applied.weights" in f["message"] and "applied.kv_cache" not in f["message"]


# -- refused, the ledger unchanged -----------------------------------------------------------------
@pytest.mark.parametrize(("args", "says"), [
    (["append", "--from", "jsonl", "items.jsonl", "--apparatus", "app.json"],
     "--apparatus app.json: the key 'applied' is reserved for what an engine's load log shows"),
    (["append", "--from", "jsonl", "items.jsonl", "--log", "never-written.log"],
     "--log: log file never-written.log could not be read"),
    (["append", "draft.json", "--log", "llama_server.log"], "--log goes with --from"),
])
def test_refused_with_one_sentence_and_nothing_appended(ledger_dir: Path, args: list[str],
                                                        says: str) -> None:
    write_jsonl(ledger_dir / "items.jsonl", [{"id": i, "score": 1} for i in range(3)])
    write_json(ledger_dir / "app.json", {"applied": {"context": 4096}})
    write_json(ledger_dir / "draft.json", {"kind": "note", "body": {"text": "hi"}})
    shutil.copyfile(LOGS / "llama_server.log", ledger_dir / "llama_server.log")
    before = exported()
    r = run_cli(*args)
    assert r.code == 2, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], r.err
    assert exported() == before


def test_run_refuses_a_declared_applied_before_the_command_starts(ledger_dir: Path) -> None:
    write_json(ledger_dir / "app.json", {"applied": {"context": 4096}})
    before = exported()
    r = lb("run", "--outcomes", "items.jsonl", "--apparatus", "app.json", "--", *writer(),
           cwd=ledger_dir)
    assert r.returncode == 2 and "'applied' is reserved" in r.stderr
    assert not (ledger_dir / "items.jsonl").exists()  # the command never ran
    assert exported() == before
