"""Fake secrets planted the ways they really leak never reach the ledger, its blobs or any output.

One `logbook run` of an lm-eval-like command gets secrets through the environment, through
`--model_args api_key=...` on its command line (which lm_eval also writes into its results file),
through a token in the git remote of the working tree, through a `.env` file it prints, and
through its own output (the value of a secret variable, and shaped tokens). Then every byte
logbook keeps or prints is searched for every secret.

The secrets are obviously fake (FAKE/EXAMPLE in them) but shaped like the real thing, since
shape is what the scrubber goes by.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
from conftest import run_cli

from logbook.capture.apparatus import _ENV_PREFIXES

FIXTURES = Path(__file__).parents[1] / "fixtures"
LM_SEED1 = FIXTURES / "lm_eval/run-seed1"

ENV_SECRETS = {
    "OPENAI_API_KEY": "sk-proj-FAKEfakeFAKE0123456789abcdefFAKEfakeFAKE0123",
    "HF_TOKEN": "hf_FAKEfakeFAKEfake0123456789AbCdEf",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example pair
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "VLLM_API_KEY": "FAKEvllmKey-7d1c0e9b2a4f",  # allow-listed prefix, secret name
}
MODEL_ARGS_KEY = "sk-FAKEmodelargs9876543210zyxwvuMODEL"
GIT_TOKEN = "ghp_FAKEgitremote0123456789abcdefABCDEF"
DOTENV = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-FAKEdotenv-q7Rw2Xe9Ty4Ui6Op",
    "DB_PASSWORD": "FAKEdbPassw0rd-7781",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
}
PRINTED = {  # shaped tokens the command logs, in no variable at all
    "slack": "xoxb-FAKE-0123456789-fakefakefake",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsignatureFAKE",
    "github": "ghs_FAKEprinted5f3e8a1c7b9d2e4f6a0c8e1b",
}
SECRETS = [*ENV_SECRETS.values(), MODEL_ARGS_KEY, GIT_TOKEN, *DOTENV.values(),
           *PRINTED.values()]
# each secret's tail is its own, so that a finding names the secret that leaked
assert all(a[-12:] not in b for a in SECRETS for b in SECRETS if a != b)

# The evaluation command: logs the way harnesses and debugging users do, then writes an
# lm-eval output whose results file carries the model arguments, api_key included.
CHILD = r"""
import os, pathlib, shutil, subprocess, sys
print("lm_eval arguments:", sys.argv[1:])
print("--- .env ---"); print(open(".env").read())
print("using OpenAI key", os.environ["OPENAI_API_KEY"])
print("env:", {k: os.environ[k] for k in ("HF_TOKEN", "VLLM_API_KEY")})
print("aws", os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"], file=sys.stderr)
print("Authorization: Bearer " + os.environ["PRINTED_JWT"], file=sys.stderr)
print("notify via slack token", os.environ["PRINTED_SLACK"], "and", os.environ["PRINTED_GH"])
sys.stdout.flush()
subprocess.run(["git", "remote", "-v"], check=True)
pathlib.Path("server.log").write_text(
    "INFO connecting to postgres://evals:" + os.environ["DB_PASSWORD_FOR_LOG"] + "@db:5432/e\n"
    "DEBUG headers {'authorization': 'Bearer " + os.environ["OPENAI_API_KEY"] + "'}\n")
out = pathlib.Path("out/my-7b"); out.mkdir(parents=True, exist_ok=True)
for src in pathlib.Path(os.environ["HARNESS_OUTPUT"]).iterdir():
    shutil.copyfile(src, out / src.name)
"""


def _harness_output(folder: Path) -> Path:
    """The seed-1 lm-eval output, with the api_key lm_eval copies from --model_args."""
    folder.mkdir()
    for src in LM_SEED1.iterdir():
        shutil.copyfile(src, folder / src.name)
    results = next(folder.glob("results_*.json"))
    doc = orjson.loads(results.read_bytes())
    doc["config"]["model_args"] = {"pretrained": "my-org/my-7b", "api_key": MODEL_ARGS_KEY}
    results.write_bytes(orjson.dumps(doc))
    return folder


def _leaks(text: str | bytes) -> list[str]:
    """Every secret (or its last 12 characters: a partial redaction leaks too) found."""
    data = text.encode() if isinstance(text, str) else text
    return [s for s in SECRETS if s.encode() in data or s[-12:].encode() in data]


def test_planted_secrets_reach_nothing_logbook_keeps_or_prints(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    work = ledger_dir
    git = ["git", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "remote", "add", "origin",
                    f"https://x-access-token:{GIT_TOKEN}@github.com/o/r"], check=True)
    (work / ".env").write_text("".join(f"{k}={v}\n" for k, v in DOTENV.items()))
    # the process's own environment without the variables capture keeps (a library imported by
    # another test in this process may have set one: lm_eval sets HF_XET_HIGH_PERFORMANCE),
    # so that what is captured is exactly what this test plants
    own = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_PREFIXES)}
    env = {**own, **ENV_SECRETS, "HARNESS_OUTPUT": str(_harness_output(tmp_path / "h")),
           "PRINTED_JWT": PRINTED["jwt"], "PRINTED_SLACK": PRINTED["slack"],
           "PRINTED_GH": PRINTED["github"], "DB_PASSWORD_FOR_LOG": DOTENV["DB_PASSWORD"],
           "HF_HOME": str(tmp_path / "hf"), "CUDA_VISIBLE_DEVICES": "0"}
    command = [sys.executable, "-c", CHILD, "--model", "vllm", "--model_args",
               f"pretrained=my-org/my-7b,api_key={MODEL_ARGS_KEY}", "--output_path", "out/"]

    # The command on its own: what it prints is the user's terminal, and it does leak.
    alone = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                           check=True)
    assert _leaks(alone.stdout + alone.stderr) == SECRETS  # every plant got out

    r = subprocess.run([sys.executable, "-m", "logbook", "run", "--from", "lm-eval", "out",
                        "--log", "server.log", "--", *command], cwd=work, env=env,
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    # The child's streams pass through as-is (they are the user's own terminal output); only
    # what logbook adds after them is its own, and that must be clean.
    assert r.stdout.startswith(alone.stdout)
    assert r.stderr.startswith(alone.stderr)
    # what logbook adds: the data line on stdout (SEQ DIGEST run), its confirmation on stderr
    data = r.stdout[len(alone.stdout):]
    assert data.endswith(" run\n") and len(data.splitlines()) == 1
    additions = r.stderr[len(alone.stderr):]
    assert "appended run" in additions
    assert _leaks(additions + data) == []

    # Every file logbook wrote: the database (and any WAL), and every blob.
    files = [p for p in (work / ".logbook").rglob("*") if p.is_file()]
    assert any(p.parent.name == "blobs" for p in files)
    for path in files:
        assert _leaks(path.read_bytes()) == [], path

    # Everything logbook prints about the run.
    outputs = {}
    for args in (["export"], ["log"], ["log", "--json"], ["show", "--json", "@1"],
                 ["show", "@1"], ["verify"], ["append", "--from", "lm-eval", str(tmp_path / "h"),
                                              "--json"]):
        res = run_cli(*args)
        if args[0] == "append":  # the output `run` just recorded: refused, each run once
            assert res.code == 2 and "is already in the ledger as run @1" in res.err, res.err
        else:
            assert res.code == 0, (args, res.err)
        outputs[" ".join(args)] = res.out + res.err
    for args, text in outputs.items():
        assert _leaks(text) == [], args

    # What was kept is still useful: redacted in place, not dropped.
    body = orjson.loads(outputs["show --json @1"])["entry"]["body"]
    captured = body["apparatus"]["captured"]
    assert "pretrained=my-org/my-7b,api_key=[redacted]" in captured["command"]
    assert captured["git"]["remote"] == "https://github.com/o/r"
    assert captured["env"] == {"CUDA_VISIBLE_DEVICES": "0", "HF_HOME": str(tmp_path / "hf")}
    assert body["apparatus"]["harness_config"]["model_args"]["api_key"] == "[redacted]"
    assert {log["name"] for log in body["logs"]} == {"output", "server.log"}
    output_blob = next(log for log in body["logs"] if log["name"] == "output")
    kept = (work / ".logbook/blobs" / output_blob["sha256"][7:]).read_text()
    assert "lm_eval arguments:" in kept and "[redacted]" in kept


# ---------------------------------------------------------------- error text


def _export_text() -> str:
    r = run_cli("export")
    assert r.code == 0, r.err
    return r.out


def test_secrets_in_a_failed_recordings_exception_and_item_errors(ledger_dir: Path) -> None:
    """HTTP clients put the URL, credentials included, into their exception text, and servers
    echo headers into error bodies: the recording API scrubs the reason and item errors."""
    from logbook import Ledger

    url = f"https://x-access-token:{GIT_TOKEN}@api.example.com/v1"
    with Ledger.open(ledger_dir) as ledger:
        try:
            with ledger.recording(metric="acc") as run:
                run.item("q1", None, error=f"HTTP 401: Authorization: Bearer {PRINTED['jwt']}")
                raise ConnectionError(f"cannot reach {url}")
        except ConnectionError:
            pass
    assert run.entry is not None and run.entry.body["status"] == "failed"
    assert _leaks(_export_text()) == []


def test_secrets_in_a_harness_logs_error_text(ledger_dir: Path, tmp_path: Path) -> None:
    """An Inspect log's error message becomes the run's `reason`, and each errored sample's
    message its item `error`: both are scrubbed before `append --from` writes the run."""
    src = next((FIXTURES / "inspect/run-failed").glob("*.json"))
    doc = orjson.loads(src.read_bytes())
    leak = (f"APIConnectionError('https://me:{DOTENV['DB_PASSWORD']}@proxy.internal:3128 "
            f"refused; key {ENV_SECRETS['OPENAI_API_KEY']}')")
    doc["error"]["message"] = leak
    for sample in doc["samples"]:
        if sample.get("error"):
            sample["error"]["message"] = leak
    log = tmp_path / src.name
    log.write_bytes(orjson.dumps(doc))
    r = run_cli("append", "--from", "inspect", str(log))
    assert r.code == 0, r.err
    assert _leaks(r.out + r.err) == []
    assert _leaks(_export_text()) == []
