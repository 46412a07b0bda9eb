"""What the machine can tell about itself, for a run's `apparatus.captured` (DESIGN §4.4).

Pure stdlib and cheap to import: subprocesses, hashing and package metadata are only touched when
`capture()` runs.  Everything written passes the one secret filter, logbook.capture.redact:
environment variables come from an allow-list and are dropped when their name or value looks
secret; command lines have secret values replaced by ``[redacted]``.
A probe that fails records nothing.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from logbook.capture.argv import printable, redact_argv
from logbook.capture.redact import is_secret_name, looks_secret_value, strip_url_credentials

if TYPE_CHECKING:
    from pathlib import Path

TIMEOUT = 5.0  # seconds for each external tool (git, nvidia-smi)

# Packages that move scores when present; the distribution name is the key with "-" for "_".
SCORE_PACKAGES = (
    "torch", "transformers", "vllm", "lm_eval", "inspect_ai", "openai", "anthropic", "accelerate",
    "peft", "tokenizers", "datasets", "numpy", "sglang", "llama_cpp_python", "tensorrt_llm",
    "flash_attn", "xformers", "bitsandbytes", "jax",
)  # fmt: skip
_ENV_EXACT = frozenset({
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS", "TOKENIZERS_PARALLELISM", "CUBLAS_WORKSPACE_CONFIG", "LOGBOOK_SESSION",
})  # fmt: skip
_ENV_PREFIXES = ("NCCL_", "VLLM_", "HF_", "TORCH_", "PYTORCH_")

def _run(args: list[str]) -> bytes | None:
    """stdout of a tool, or None if it is missing, fails or hangs."""
    import subprocess

    env = dict(os.environ, LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    try:
        p = subprocess.run(args, env=env, capture_output=True, timeout=TIMEOUT,
                           stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return p.stdout if p.returncode == 0 else None


def _text(args: list[str]) -> str | None:
    out = _run(args)
    return None if out is None else out.decode("utf-8", "backslashreplace").strip()


def _sha256(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


def git_info(path: str | os.PathLike[str],
             ignore: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """Commit, branch, dirty flag, diff hash and credential-free origin of the tree at `path`;
    the folder `ignore` (the ledger's own) never makes the tree dirty nor enters the diff."""
    cwd = os.fspath(path)
    git = ["git", "-C", cwd if os.path.isdir(cwd) else os.path.dirname(cwd) or "."]
    if _text([*git, "rev-parse", "--is-inside-work-tree"]) != "true":
        return None
    commit = _text([*git, "rev-parse", "--verify", "-q", "HEAD"]) or None
    spec = ["--", ":/"]
    top = _text([*git, "rev-parse", "--show-toplevel"])
    if ignore is not None and top:
        rel = os.path.relpath(os.path.realpath(os.fspath(ignore)), os.path.realpath(top))
        if rel != "." and not rel.startswith(".."):  # the ledger's folder is in this tree
            spec.append(f":(top,exclude){rel}")
    status = _text([*git, "status", "--porcelain", *spec])
    info: dict[str, Any] = {
        "commit": commit,
        "branch": _text([*git, "symbolic-ref", "-q", "--short", "HEAD"]) or None,
        "dirty": None if status is None else bool(status),
    }
    if info["dirty"] and commit:  # the hash is of exactly the bytes `git diff HEAD` prints
        diff = _run([*git, "diff", "--no-color", "--no-ext-diff", "HEAD", *spec])
        if diff is not None:
            info["diff_hash"] = _sha256(diff)
    remote = _text([*git, "config", "--get", "remote.origin.url"])
    info["remote"] = strip_url_credentials(remote) if remote else None
    return info


def _packages() -> dict[str, Any]:
    from importlib import metadata

    seen: dict[str, str] = {}
    for dist in metadata.distributions():
        name, version = _name_version(dist)
        if name and version is not None:
            seen.setdefault(re.sub(r"[-_.]+", "-", name).lower(), version)
    lines = "\n".join(sorted(f"{n}=={v}" for n, v in seen.items()))
    versions = {k: seen[d] for k in SCORE_PACKAGES if (d := k.replace("_", "-")) in seen}
    return {"hash": _sha256(lines.encode()), "versions": versions}


def _name_version(dist: Any) -> tuple[str | None, str | None]:
    """A distribution's Name and Version, read from its metadata's headers alone (they end at
    the first blank line: the long description after it, often the whole README, is not
    parsed); importlib's full parse when the headers do not give both on one line each."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    found: dict[str, str] = {}
    last = ""
    for line in (text or "").splitlines():
        if not line.strip():
            break
        if line[0] in " \t":  # a folded header: ours is read in full below
            if last in ("Name", "Version"):
                found.clear()
                break
            continue
        last, sep, value = line.partition(":")
        if sep and last in ("Name", "Version") and last not in found:
            found[last] = value.strip()
    if found.get("Name") and found.get("Version"):
        return found["Name"], found["Version"]
    meta = dist.metadata
    return (meta["Name"] if meta else None), (meta["Version"] if meta else None)


def _proc(path: str, field: str) -> str | None:
    """The value of the first ``field: value`` line of a /proc file, if any."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith(field)), None)
    except OSError:
        return None


def _cpu() -> dict[str, Any]:
    import platform

    model = _proc("/proc/cpuinfo", "model name") or platform.processor() or None
    return {"model": model, "cores": os.cpu_count()}


def _memory() -> int:
    kb = _proc("/proc/meminfo", "MemTotal")
    if kb:
        return int(kb.split()[0]) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _gpus() -> list[dict[str, Any]] | None:
    import shutil

    if not (smi := shutil.which("nvidia-smi")):
        return None
    csv = _text([smi, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"])
    if csv is None:
        return None
    m = re.search(r"CUDA Version:\s*([0-9.]+)", _text([smi]) or "")
    cuda = m.group(1) if m else None
    rows = [[p.strip() for p in line.split(",")] for line in csv.splitlines()]
    return [{"name": r[0], "memory": r[1], "driver": r[2], "cuda": cuda}
            for r in rows if len(r) >= 3]


def _os() -> dict[str, str]:
    import platform

    return {"system": platform.system(), "release": platform.release(),
            "machine": platform.machine()}


__all__ = ["SCORE_PACKAGES", "capture", "captured_env", "git_info"]


def captured_env(env: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed variables of `env`, minus any whose name or value looks secret."""
    keep = {}
    for name, value in env.items():
        up = name.upper()
        if not (up in _ENV_EXACT or up.endswith("SEED") or up.startswith(_ENV_PREFIXES)):
            continue
        if is_secret_name(name) or looks_secret_value(value):
            continue
        keep[printable(name)] = printable(value)
    return dict(sorted(keep.items()))


def capture(
    argv: list[str] | None, cwd: Path | str, env: Mapping[str, str] | None = None,
    ignore: Path | str | None = None,
) -> dict[str, Any]:
    """Capture git, python, packages, OS, CPU, memory, GPUs, command and environment.

    `env` defaults to ``os.environ``; `ignore` is the ledger's folder, which git's dirty flag
    and diff hash leave out. Each probe is independent: one that fails is left out.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    probes: list[tuple[str, Callable[[], Any]]] = [
        ("git", lambda: git_info(cwd, ignore)),
        ("python", lambda: sys.version.split()[0]),
        ("packages", _packages),
        ("os", _os),
        ("cpu", _cpu),
        ("memory_bytes", _memory),
        ("gpus", _gpus),
        ("command", lambda: None if argv is None else redact_argv(list(argv), environ)),
        ("env", lambda: captured_env(environ)),
    ]
    out: dict[str, Any] = {}
    for key, probe in probes:
        try:
            value = probe()
        except Exception:  # a failing probe records nothing
            continue
        if value is not None:
            out[key] = value
    return out
