"""Tests for logbook.capture.apparatus: what a run's `apparatus.captured` records, and that no
secret planted the ways secrets really leak (environment, argv, git remotes, printed output)
survives."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logbook.capture import apparatus as cap
from logbook.capture.apparatus import capture, git_info
from logbook.capture.argv import redact_argv
from logbook.capture.redact import is_secret_name, looks_secret_value, scrub_text

# Obviously fake, but shaped like the real thing.
OPENAI = "sk-proj-FAKEFAKEFAKEfake0123456789FAKEFAKEfake0123456789"
ANTHROPIC = "sk-ant-api03-FAKEFAKEfakefake0123456789-FAKEFAKEfake_0123456789"
GITHUB = "ghp_FAKEfakeFAKEfake0123456789FAKEfake0123"
HF = "hf_FAKEfakeFAKEfakeFAKEfake0123456789"
AWS_ID = "AKIAFAKEFAKEFAKE0123"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY0123"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.FAKEsig_0123456789abcdefFAKE"
RANDOM_B64 = "Qk9hY2F0ZTN6WmZ4R1p0c2M0VnBmM2xhS0xZ"  # base64 of nothing in particular
SHAPELESS = "correct-horse-battery"  # a secret with no recognisable shape, only known from env

ALL_SECRETS = [OPENAI, ANTHROPIC, GITHUB, HF, AWS_ID, AWS_SECRET, JWT, RANDOM_B64, SHAPELESS]


def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not shutil.which("git"):
        pytest.skip("git not installed")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "eval.py").write_text("print('hello')\n")
    _git(root, "add", "eval.py")
    _git(root, "commit", "-q", "-m", "first")
    return root


# --- the machine ------------------------------------------------------------------------------


def test_capture_of_this_machine(tmp_path: Path) -> None:
    env = {"CUDA_VISIBLE_DEVICES": "0,1", "PATH": os.environ.get("PATH", "")}
    first = capture(["python", "-m", "lm_eval", "--tasks", "mmlu"], tmp_path, env)
    for key in ("python", "packages", "os", "cpu", "memory_bytes", "command", "env"):
        assert key in first, key
    assert "git" not in first  # tmp_path is not a git tree
    assert first["python"] == ".".join(map(str, sys.version_info[:3]))
    assert first["packages"]["hash"].startswith("sha256:") and len(first["packages"]["hash"]) == 71
    assert set(first["packages"]["versions"]) <= set(cap.SCORE_PACKAGES)
    assert set(first["os"]) == {"system", "release", "machine"}
    assert first["cpu"]["cores"] == os.cpu_count()
    assert isinstance(first["memory_bytes"], int) and first["memory_bytes"] > 0
    assert first["command"] == ["python", "-m", "lm_eval", "--tasks", "mmlu"]
    assert first["env"] == {"CUDA_VISIBLE_DEVICES": "0,1"}
    if shutil.which("nvidia-smi") is None:
        assert "gpus" not in first
    json.dumps(first, ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert capture(["python", "-m", "lm_eval", "--tasks", "mmlu"], tmp_path, env) == first


def test_packages_are_the_names_and_versions_importlib_parses() -> None:
    # the probe reads only each distribution's headers: the same list as the full parse
    from importlib import metadata

    seen: dict[str, str] = {}
    for dist in metadata.distributions():
        if dist.metadata and dist.metadata["Name"]:
            name = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
            seen.setdefault(name, dist.version)
    listed = "\n".join(sorted(f"{n}=={v}" for n, v in seen.items()))
    assert cap._packages()["hash"] == "sha256:" + hashlib.sha256(listed.encode()).hexdigest()


def test_a_distribution_whose_headers_are_folded_is_read_in_full() -> None:
    class Dist:
        def __init__(self) -> None:
            self.metadata = {"Name": "folded-pkg", "Version": "2.0"}

        def read_text(self, name: str) -> str | None:
            return "Metadata-Version: 2.1\nName:\n  folded-pkg\n\nVersion: 9 (in the body)\n"

    assert cap._name_version(Dist()) == ("folded-pkg", "2.0")


def test_capture_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    got = capture(None, tmp_path)
    assert got["env"]["OMP_NUM_THREADS"] == "4"
    assert "command" not in got
    assert OPENAI not in json.dumps(got)


def test_a_failing_probe_records_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def boom() -> None:
        raise RuntimeError("probe broke")

    monkeypatch.setattr(cap, "_packages", boom)
    got = capture([], tmp_path, {})
    assert "packages" not in got and "python" in got and "os" in got


def _fake_tool(bindir: Path, name: str, script: str) -> None:
    path = bindir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def test_gpus_from_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _fake_tool(bindir, "nvidia-smi", """
case "$1" in
  --query-gpu*) echo "NVIDIA A100-SXM4-80GB, 81920 MiB, 535.104.05"
                echo "NVIDIA A100-SXM4-80GB, 81920 MiB, 535.104.05" ;;
  *) echo "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |" ;;
esac
""")
    monkeypatch.setenv("PATH", str(bindir))  # also hides git: that probe records nothing
    got = capture([], tmp_path, {})
    gpu = {"name": "NVIDIA A100-SXM4-80GB", "memory": "81920 MiB", "driver": "535.104.05",
           "cuda": "12.2"}  # fmt: skip
    assert got["gpus"] == [gpu, gpu]
    assert "git" not in got


def test_a_hanging_tool_is_given_up_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    if sleep is None:
        pytest.skip("no sleep binary")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _fake_tool(bindir, "nvidia-smi", f"exec {sleep} 30\n")
    _fake_tool(bindir, "git", f"exec {sleep} 30\n")
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(cap, "TIMEOUT", 0.3)
    got = capture(["x"], tmp_path, {})
    assert "gpus" not in got and "git" not in got and got["command"] == ["x"]


def test_import_is_light() -> None:
    code = (
        "import sys; before = set(sys.modules); import logbook.capture.apparatus; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    new = set(out.stdout.split())
    assert "logbook.capture.apparatus" in new
    assert not {"subprocess", "hashlib", "platform", "importlib.metadata", "numpy"} & new


# --- git --------------------------------------------------------------------------------------


def test_git_info_clean_dirty_and_diff_hash(repo: Path) -> None:
    info = git_info(repo)
    assert info == {"commit": _git(repo, "rev-parse", "HEAD"), "branch": "main", "dirty": False,
                    "remote": None}  # fmt: skip
    (repo / "eval.py").write_text("print('hello, world')\n")
    dirty = git_info(repo / "eval.py")  # a file inside the tree works too
    assert dirty is not None and dirty["dirty"] is True
    expected = subprocess.run(["git", "-C", str(repo), "diff", "HEAD"], capture_output=True).stdout
    assert dirty["diff_hash"] == "sha256:" + hashlib.sha256(expected).hexdigest()
    (repo / "eval.py").write_text("print('goodbye')\n")
    again = git_info(repo)
    assert again is not None and again["diff_hash"] != dirty["diff_hash"]
    assert again["commit"] == info["commit"]


def test_git_info_subdir_untracked_detached_and_outside(repo: Path, tmp_path: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    (sub / "new.txt").write_text("x")
    info = git_info(sub)
    assert info is not None and info["dirty"] is True and info["branch"] == "main"
    _git(repo, "checkout", "-q", "--detach")
    detached = git_info(repo)
    assert detached is not None and detached["branch"] is None and detached["commit"]
    outside = tmp_path / "plain"
    outside.mkdir()
    assert git_info(outside) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"https://x-access-token:{GITHUB}@github.com/o/r", "https://github.com/o/r"),
        (f"https://{GITHUB}@github.com/o/r.git", "https://github.com/o/r.git"),
        ("https://alice:hunter2@gitlab.example.com/o/r.git", "https://gitlab.example.com/o/r.git"),
        ("ssh://git:pw@github.com/o/r", "ssh://git@github.com/o/r"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
        ("https://github.com/o/r", "https://github.com/o/r"),
    ],
)
def test_git_remote_credentials_are_stripped(repo: Path, url: str, expected: str) -> None:
    _git(repo, "remote", "add", "origin", url)
    info = git_info(repo)
    assert info is not None and info["remote"] == expected


# --- secrets, planted the ways they really leak -----------------------------------------------

LEAKY_ENV = {
    "OPENAI_API_KEY": OPENAI,
    "ANTHROPIC_API_KEY": ANTHROPIC,
    "HF_TOKEN": HF,
    "HF_HUB_TOKEN_SOMETHING": "plainvalue123",
    "MY_SEED": OPENAI,  # allow-listed name, secret value: dropped
    "AWS_ACCESS_KEY_ID": AWS_ID,
    "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
    "VLLM_API_KEY": "vllm-fake-key-0123456789",
    "HF_ENDPOINT": f"https://user:{HF}@hub.example.com",
    "NCCL_SOCKET_IFNAME": "eth0",
    "SERVICE_PASSWORD": SHAPELESS,
    "CUDA_VISIBLE_DEVICES": "0,1",
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "4",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "LOGBOOK_SESSION": "s-2024-05-01",
    "PATH": "/usr/bin",
}
LEAKY_ARGV = [
    "lm_eval", "--model", "openai-chat-completions",
    "--model_args", f"model=gpt-4o,api_key={OPENAI},base_url=https://api.example.com/v1",
    "--api-key", ANTHROPIC, "--hf_token=" + HF, "--token", "shapeless-but-flagged",
    "-H", f"Authorization: Bearer {JWT}", f"https://ci:{GITHUB}@github.com/o/r.git",
    "--aws", AWS_SECRET, "--db-pass", SHAPELESS, RANDOM_B64,
    "--tasks", "mmlu,hellaswag", "--max-tokens", "512", "--output_path", "results/run-1",
]  # fmt: skip


def test_no_planted_secret_survives_capture(repo: Path) -> None:
    _git(repo, "remote", "add", "origin", f"https://x-access-token:{GITHUB}@github.com/o/r")
    got = capture(LEAKY_ARGV, repo, LEAKY_ENV)
    dump = json.dumps(got, ensure_ascii=False)
    for secret in [*ALL_SECRETS, "shapeless-but-flagged", "plainvalue123", "vllm-fake-key"]:
        assert secret not in dump, secret
    assert got["env"] == {
        "CUDA_VISIBLE_DEVICES": "0,1", "LOGBOOK_SESSION": "s-2024-05-01",
        "NCCL_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "4", "PYTHONHASHSEED": "0",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "TOKENIZERS_PARALLELISM": "false",
    }  # fmt: skip
    assert got["git"]["remote"] == "https://github.com/o/r"
    cmd = got["command"]
    assert len(cmd) == len(LEAKY_ARGV)
    assert cmd[:3] == LEAKY_ARGV[:3] and cmd[-6:] == LEAKY_ARGV[-6:]
    assert cmd[4] == "model=gpt-4o,api_key=[redacted],base_url=https://api.example.com/v1"
    assert cmd[5:9] == ["--api-key", "[redacted]", "--hf_token=[redacted]", "--token"]
    assert cmd[11] == "Authorization: Bearer [redacted]"
    assert cmd[12] == "https://[redacted]@github.com/o/r.git"


def test_scrub_text_of_command_output() -> None:
    dotenv = (
        f"OPENAI_API_KEY={OPENAI}\nexport HF_TOKEN='{HF}'\nDB_PASSWORD=\"hunter2 two\"\n"
        f"AWS_SECRET_ACCESS_KEY = {AWS_SECRET}\nMAX_TOKENS=512\nauthor=Jane\n"
    )
    output = (
        "Loading model...\n" + dotenv
        + f"curl -H 'Authorization: Bearer {JWT}' -H 'x-api-key: {ANTHROPIC}'\n"
        + f'{{"api_key": "{GITHUB}", "model": "gpt-4o"}}\n'
        + f"debug: connecting with {SHAPELESS} to https://ci:{GITHUB}@github.com/o/r\n"
        + f"random {RANDOM_B64} and key id {AWS_ID}\n"
        + "dataset sha256:" + "ab" * 32 + " 100%|██████████| 200/200 acc=0.61\n"
    )  # fmt: skip
    text, n = scrub_text(output, env={"SERVICE_PASSWORD": SHAPELESS, "HOME": "/root"})
    for secret in [*ALL_SECRETS, "hunter2"]:
        assert secret not in text, secret
    assert n == 11
    for kept in ["Loading model...", "MAX_TOKENS=512", "author=Jane", '"model": "gpt-4o"',
                 "sha256:" + "ab" * 32, "200/200 acc=0.61", "OPENAI_API_KEY=[redacted]"]:
        assert kept in text, kept  # fmt: skip
    assert scrub_text("plain log line, nothing to see") == ("plain log line, nothing to see", 0)
    # without the env a shapeless secret cannot be known
    assert SHAPELESS in scrub_text(f"pw {SHAPELESS}")[0]


def test_private_key_block_is_scrubbed() -> None:
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAfake\nfake\n-----END OPENSSH PRIVATE KEY-----"
    text, n = scrub_text(f"before\n{pem}\nafter")
    assert text == "before\n[redacted]\nafter" and n == 1


def test_helpers() -> None:
    for name in ["OPENAI_API_KEY", "hf_token", "x-api-key", "DB_PASSWD", "Authorization",
                 "GITHUB_CREDENTIALS", "session_id", "COOKIE", "private_key", "apiKey"]:
        assert is_secret_name(name), name  # fmt: skip
    for name in ["max_tokens", "TOKENIZERS_PARALLELISM", "author", "CUDA_VISIBLE_DEVICES",
                 "LOGBOOK_SESSION", "model", "PYTHONHASHSEED"]:
        assert not is_secret_name(name), name  # fmt: skip
    for value in [*ALL_SECRETS[:-1], "Bearer abc123def456", "ab" * 20]:
        assert looks_secret_value(value), value
    for value in ["0,1", "meta-llama/Meta-Llama-3-8B-Instruct", "expandable_segments:True",
                  "/home/alice/checkpoints/Llama3-8B/step_1000", "GPU-8e4f1b2c-1234-5678-9abc-"
                  "def012345678", "sha256:" + "cd" * 32, "Bearer authentication", "false"]:
        assert not looks_secret_value(value), value  # fmt: skip


# --- argv -------------------------------------------------------------------------------------


def test_ordinary_arguments_are_kept_byte_for_byte() -> None:
    argv = [
        "vllm", "serve", "meta-llama/Meta-Llama-3-8B-Instruct", "--max-model-len", "8192",
        "--kv-cache-dtype", "fp8", "--tokenizer", "hf-internal-testing/llama-tokenizer",
        "--model_args", "pretrained=EleutherAI/pythia-160m,revision=step100000,dtype=float",
        "--seed=1234", "--output", "/data/runs/2024-05-01T12:30:45/out.jsonl", "-n", "-1", "",
        "--max_tokens", "512", "--tasks=mmlu_high_school_macroeconomics", "ünïcödé ✓",
    ]  # fmt: skip
    assert redact_argv(argv) == argv


def test_non_utf8_arguments_are_escaped() -> None:
    argv = ["run", os.fsdecode(b"caf\xe9"), os.fsdecode(b"--api-key=\xff\xfe"), "\ud800", b"\xff"]
    out = redact_argv(argv)  # type: ignore[arg-type]
    assert out == ["run", "caf\\xe9", "--api-key=[redacted]", "\\ud800", "\\xff"]
    json.dumps(out, ensure_ascii=False).encode("utf-8")


ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _body(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=lo, max_size=hi)


SECRET_TOKENS = st.one_of(
    st.tuples(st.sampled_from(["sk-", "sk-proj-", "sk-ant-api03-"]), _body(ALNUM + "-_", 20, 60)),
    st.tuples(st.sampled_from(["ghp_", "gho_", "ghs_"]), _body(ALNUM, 36, 36)),
    st.tuples(st.just("github_pat_"), _body(ALNUM + "_", 40, 82)),
    st.tuples(st.just("hf_"), _body(ALNUM, 30, 40)),
    st.tuples(st.sampled_from(["xoxb-", "xoxp-"]), _body(ALNUM + "-", 20, 50)),
    st.tuples(st.sampled_from(["AKIA", "ASIA"]), _body("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 16)),
    st.tuples(st.just("AIza"), _body(ALNUM + "-_", 35, 35)),
    # 64 hex digits are a SHA-256 digest, which redaction keeps (issue 16, finding 9)
    st.tuples(st.just(""), _body("0123456789abcdef", 32, 63).filter(lambda h: not h.isdigit())),
    st.tuples(st.just("eyJ"), st.tuples(_body(ALNUM, 8, 30), _body(ALNUM + "-_", 8, 40)).map(
        lambda p: f"{p[0]}.eyJ{p[1]}.sig")),
).map("".join)
HARMLESS = st.one_of(
    st.sampled_from(["--model", "hf", "--tasks", "mmlu,arc_easy", "--batch_size", "8", "-v",
                     "--max-tokens", "--max_new_tokens=256", "--seed", "pretrained=gpt2,dtype=bf16",
                     "meta-llama/Meta-Llama-3-8B-Instruct", "results/out.json", "--", "-"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./", max_size=20),
    st.integers().map(str),
)  # fmt: skip
EMBEDDINGS = st.sampled_from([
    "{}", "--key-file={}", "model={},dtype=bf16", "api_key={},model=x", "https://u:{}@h.example/x",
    "Authorization: Bearer {}", "prefix {} suffix", "--opt={}", "{}\n", "value: {}",
])  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet=st.characters(exclude_categories=[])), max_size=8))  # with Cs
def test_redact_argv_never_raises(argv: list[str]) -> None:
    out = redact_argv(argv)
    assert len(out) == len(argv)
    json.dumps(out, ensure_ascii=False).encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.lists(HARMLESS, max_size=10))
def test_harmless_argv_is_unchanged(argv: list[str]) -> None:
    assert redact_argv(argv) == argv


@settings(max_examples=300, deadline=None)
@given(
    st.lists(HARMLESS, max_size=4), SECRET_TOKENS, EMBEDDINGS, st.lists(HARMLESS, max_size=4),
    st.booleans(),
)
def test_generated_secrets_never_survive(
    before: list[str], token: str, shape: str, after: list[str], split_flag: bool
) -> None:
    middle = ["--opt", token] if split_flag else [shape.format(token)]
    out = redact_argv([*before, *middle, *after])
    assert token not in "\x00".join(out)
    text, n = scrub_text("\n".join([*before, shape.format(token), *after]))
    assert token not in text and n >= 1


@pytest.mark.parametrize("text", ["a-" * 40000, "A-" * 40000, "a+" * 40000, "eyJa-" * 16000,
                                  "a://" * 20000, '"key": "' * 10000, "x" * 200000])  # fmt: skip
def test_scrub_text_stays_linear_on_pathological_input(text: str) -> None:
    import time

    start = time.perf_counter()
    scrub_text(text)
    assert time.perf_counter() - start < 1.0
