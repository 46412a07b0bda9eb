"""What the machine can tell about itself, for a run's `apparatus.captured` (DESIGN §4.4).

Pure stdlib and cheap to import: subprocesses, hashing and package metadata are only touched when
`capture()` runs.  Everything written passes a secret filter: environment variables come from an
allow-list and are dropped when their name or value looks secret; command lines and free text
have secret-shaped values replaced by ``[redacted]``.  A probe that fails records nothing.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

REDACTED = "[redacted]"
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

# Patterns, compiled on first use (keeps the import light).
_SRC: dict[str, tuple[str, int]] = {
    # Name parts that mark a secret; not max_tokens, TOKENIZERS_*, AUTHOR.
    "secret_name": (
        r"key|token(?!s|iz|is|_?(?:count|ids?|len|limit|budget|type|usage))|secret|passw(?:or)?d"
        r"|credential|auth(?!or(?!iz))|cookie|session[-_]?id|private",
        re.IGNORECASE,
    ),
    # Secret shapes, each a whole match to replace.
    "shapes": (
        r"""(?<![A-Za-z0-9])(?:
            sk-[A-Za-z0-9_-]{16,}
          | gh[pousr]_[A-Za-z0-9]{20,} | github_pat_[A-Za-z0-9_]{20,}
          | hf_[A-Za-z0-9]{20,}
          | xox[abposr]-[A-Za-z0-9-]{10,}
          | (?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])
          | AIza[0-9A-Za-z_-]{30,}
          | (?<![_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?
          | -----BEGIN[A-Z\ ]*PRIVATE\ KEY-----[\s\S]*?(?:-----END[A-Z\ ]*PRIVATE\ KEY-----|\Z)
        )""",
        re.VERBOSE,
    ),
    # The credential after "Bearer": the word is kept.
    "bearer": (r"\b(bearer)(\s+)([A-Za-z0-9._~+/=:-]{8,})", re.IGNORECASE),
    "userinfo": (r"(?<![\w+.-])([A-Za-z][\w+.-]*://)([^/\s@?#\"'<>]+)@", 0),  # scheme://user@
    "hex": (r"(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])", 0),
    "hash_label": (r"(?:sha\d*|sha3-\d+|md5|blake2[bs]?|xxh\d*)[:=]$", re.IGNORECASE),
    "b64": (r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}={0,2}", 0),
    # SECRET_NAME=value, name: value, "name": "value" (.env, YAML, JSON, k=v lists, headers).
    "assign": (
        r"""(?<![\w.-])(["']?)(-*(?=[A-Za-z_])[\w.-]*?(?:SECRET)[\w.-]*)\1(\s*[:=]\s*)
            (?:(bearer|basic|token|digest)(\s+))?
            ("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;&"'<>]+)""",
        re.VERBOSE | re.IGNORECASE,
    ),
    "flag": (r"(-{1,2})([A-Za-z][\w.-]*)(=?)(.*)", re.DOTALL),
}
_SRC["assign"] = (_SRC["assign"][0].replace("SECRET", _SRC["secret_name"][0]), _SRC["assign"][1])


@functools.cache
def _rx(name: str) -> re.Pattern[str]:
    return re.compile(*_SRC[name])


def is_secret_name(name: str) -> bool:
    """True when a variable, option or key name looks like it holds a secret."""
    return bool(_rx("secret_name").search(name))


def _high_entropy(tok: str) -> bool:
    """A long base64-ish run that looks random rather than words or a path (a heuristic)."""
    t = tok.rstrip("=")
    segments = re.split(r"[-_/+]", t)
    if len(t) < 32 or max(map(len, segments)) < 10:
        return False
    if all(re.fullmatch(r"[0-9a-f]+|[0-9A-F]+|[A-Za-z]+", s) for s in segments):
        return False  # words, numbers and hex groups (uuids, GPU ids)
    if not all(re.search(c, t) for c in ("[a-z]", "[A-Z]", "[0-9]")):
        return False
    alnum = re.sub(r"[^A-Za-z0-9]", "", t)
    letters = re.sub(r"[^A-Za-z]", "", t)
    kinds = [2 if c.isdigit() else int(c.isupper()) for c in alnum]
    signs = (
        sum(x != y for x, y in pairwise(kinds)) >= 0.45 * (len(alnum) - 1),  # churn
        sum(c in "aeiouAEIOU" for c in letters) < 0.3 * len(letters),  # few vowels: not words
        len(re.findall(r"(?<![a-z])[a-z](?![a-z])", t)) >= 2,  # lone lowercase letters
        sum(map(len, re.findall(r"[a-z]{4,}|[A-Z]{5,}", t))) < 0.2 * len(t),  # few word runs
    )
    return sum(signs) >= 2


def looks_secret_value(value: str) -> bool:
    """True when a value has an API-key/token shape, carries URL credentials or is random."""
    return _scrub(value, [])[1] > 0


def _secret_env_values(env: Mapping[str, str] | None) -> list[str]:
    vals = {v for k, v in (env or {}).items()
            if len(v) >= 8 and (is_secret_name(k) or looks_secret_value(v))}
    return sorted(vals, key=len, reverse=True)


def scrub_text(text: str, env: Mapping[str, str] | None = None) -> tuple[str, int]:
    """Replace secret-looking substrings of `text` with ``[redacted]``; return (text, count).

    Covers key/token shapes, ``Bearer`` credentials, URL userinfo, long random strings,
    ``SECRET_NAME=value`` assignments, and the exact values (8+ chars) of the secret-looking
    variables in `env` wherever they appear.
    """
    return _scrub(text, _secret_env_values(env))


def _assign(m: re.Match[str]) -> str:
    q, name, sep, scheme, sp, val = m.groups()
    if val.strip("\"'") in ("", REDACTED):
        return m.group()
    quote = val[0] if val[0] in "\"'" and len(val) > 1 and val[-1] == val[0] else ""
    return f"{q}{name}{q}{sep}{scheme or ''}{sp or ''}{quote}{REDACTED}{quote}"


def _userinfo(m: re.Match[str]) -> str:
    info = m.group(2)
    secret = ":" in info or len(info) > 32 or _rx("shapes").search(info)
    return f"{m.group(1)}{REDACTED}@" if secret else m.group()


def _bearer(m: re.Match[str]) -> str:  # a credential, not prose ("Bearer authentication")
    tok = m.group(3)
    secret = tok != REDACTED and (len(tok) >= 20 or not tok.isalpha())
    return f"{m.group(1)}{m.group(2)}{REDACTED}" if secret else m.group()


def _hex(m: re.Match[str]) -> str:  # kept: a labelled digest ("sha256:..."), a plain number
    labelled = _rx("hash_label").search(m.string[max(0, m.start() - 12) : m.start()])
    return m.group() if labelled or m.group().isdigit() else REDACTED


_RULES: list[tuple[str, Callable[[re.Match[str]], str]]] = [
    ("userinfo", _userinfo),
    ("assign", _assign),
    ("shapes", lambda m: REDACTED),
    ("bearer", _bearer),
    ("hex", _hex),
    ("b64", lambda m: REDACTED if _high_entropy(m.group()) else m.group()),
]


def _scrub(text: str, env_values: list[str]) -> tuple[str, int]:
    count = 0
    for value in env_values:
        n = text.count(value)
        text, count = text.replace(value, REDACTED), count + n

    def counted(repl: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
        def wrap(m: re.Match[str]) -> str:
            nonlocal count
            out = repl(m)
            count += out != m.group()
            return out

        return wrap

    for name, repl in _RULES:
        text = _rx(name).sub(counted(repl), text)
    return text, count


def _printable(arg: str | bytes) -> str:
    """A str that encodes as UTF-8: undecodable bytes become backslash escapes."""
    arg = os.fsdecode(arg) if isinstance(arg, bytes) else arg
    for errors in ("strict", "surrogateescape"):
        try:
            return arg.encode("utf-8", errors).decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            pass
    return arg.encode("utf-8", "backslashreplace").decode("utf-8")


def redact_argv(argv: list[str], env: Mapping[str, str] | None = None) -> list[str]:
    """Redact secrets in a command line, keeping every other argument byte-for-byte.

    ``--api-key X`` and ``--token=X`` lose their value; secret keys inside ``k=v,k=v`` lists,
    URL credentials, ``Bearer`` headers and secret-shaped values are replaced by ``[redacted]``.
    Arguments that are not valid UTF-8 come back with backslash escapes.
    """
    env_values = _secret_env_values(env)
    out: list[str] = []
    take_next = False
    for raw in argv:
        arg = _printable(raw)
        if take_next and not arg.startswith("-"):
            out.append(REDACTED)
            take_next = False
            continue
        take_next = False
        m = _rx("flag").fullmatch(arg)
        if m and is_secret_name(m.group(2)):
            dashes, name, eq, value = m.groups()
            if eq:
                arg = f"{dashes}{name}={REDACTED}" if value else arg
            else:
                take_next = True
        out.append(_scrub(arg, env_values)[0])
    return out


def strip_url_credentials(url: str) -> str:
    """Drop userinfo from http(s) URLs and passwords from others; scrub what remains."""
    m = _rx("userinfo").match(url)
    if m:
        scheme, userinfo = m.groups()
        user = userinfo.split(":", 1)[0]
        keep = "" if scheme.lower().startswith(("http", "ftp", "ws")) else user
        if keep and looks_secret_value(keep):
            keep = ""
        url = scheme + (keep + "@" if keep else "") + url[m.end() :]
    return scrub_text(url)[0]


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
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            seen.setdefault(re.sub(r"[-_.]+", "-", name).lower(), dist.version)
    lines = "\n".join(sorted(f"{n}=={v}" for n, v in seen.items()))
    versions = {k: seen[d] for k in SCORE_PACKAGES if (d := k.replace("_", "-")) in seen}
    return {"hash": _sha256(lines.encode()), "versions": versions}


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


def captured_env(env: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed variables of `env`, minus any whose name or value looks secret."""
    keep = {}
    for name, value in env.items():
        up = name.upper()
        if not (up in _ENV_EXACT or up.endswith("SEED") or up.startswith(_ENV_PREFIXES)):
            continue
        if is_secret_name(name) or looks_secret_value(value):
            continue
        keep[_printable(name)] = _printable(value)
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


def scrub_run_body(body: dict[str, Any]) -> dict[str, Any]:
    """Error texts, reasons and notes can carry secrets (URLs with tokens, keys in messages)."""
    def clean(text: Any) -> Any:
        return scrub_text(text, env=os.environ)[0] if isinstance(text, str) else text

    out = dict(body)
    for field in ("reason", "note"):
        out[field] = clean(out.get(field))
    oc = out.get("outcomes")
    if isinstance(oc, dict) and isinstance(oc.get("error"), list):
        out["outcomes"] = {**oc, "error": [clean(e) for e in oc["error"]]}
    if isinstance(out.get("reported"), dict) and isinstance(out["reported"].get("error"), str):
        out["reported"] = {**out["reported"], "error": clean(out["reported"]["error"])}
    return {k: v for k, v in out.items() if v is not None or k in ("plan", "arm")}
