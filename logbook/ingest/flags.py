"""What a harness's own command line asks for, as the apparatus fields its adapter records them
under (docs/recording.md, "Pins"): `logbook run --plan P --arm A -- lm_eval ...` (or
`-- inspect eval ...`) holds these to the plan's pins before the command starts, so a
contradiction costs nothing but a sentence.

Only flags whose recorded field is certain are read; anything else is judged after the run,
from what the harness wrote. Values stay as the command line spells them (strings): pins
compare by what a value denotes (logbook.ledger.intake.denotes), not by its spelling.
"""

from __future__ import annotations

from typing import Any

from logbook.ingest import option_value, program

# lm-eval: flag -> the dotted field of the run's apparatus (logbook.ingest.lm_eval_apparatus)
_LM_EVAL = {"--batch_size": "harness_config.batch_size",
            "--num_fewshot": "harness_config.num_fewshot",
            "--limit": "harness_config.limit",
            "--model": "engine"}
_LM_EVAL_SEEDS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
# inspect eval: flag -> field (logbook.ingest.inspect _apparatus)
_INSPECT = {"--epochs": "harness_config.config.epochs",
            "--temperature": "decoding.temperature",
            "--seed": "decoding.seed",
            "--model": "model"}


def requested(command: list[str]) -> dict[str, Any]:
    """Dotted apparatus field -> the value the command line gives it (an empty dict for a
    command that is no harness logbook knows)."""
    args = program(command)
    if args and args[0] in ("lm_eval", "lm-eval"):
        return _lm_eval(args)
    if len(args) > 1 and args[0] in ("inspect", "inspect_ai") and args[1] in ("eval",
                                                                               "eval-set"):
        return _inspect(args)
    return {}


def _pairs(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` as a harness writes its model or task arguments."""
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def _lm_eval(args: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for flag, field in _LM_EVAL.items():
        value = option_value(args, flag)
        if value is not None:
            out[field] = value
    model_args = option_value(args, "--model_args")
    if model_args and not model_args.lstrip().startswith("{"):
        pairs = _pairs(model_args)
        for key, value in pairs.items():
            if key not in ("api_key", "token"):
                out[f"harness_config.model_args.{key}"] = value
        if pairs.get("pretrained") or pairs.get("model"):
            out["model"] = pairs.get("pretrained") or pairs.get("model")
    seed = option_value(args, "--seed")
    if seed:
        values = [v.strip() for v in seed.split(",")]
        if len(values) == 1:
            values *= 4
        for name, value in zip(_LM_EVAL_SEEDS, values, strict=False):
            if value and value != "None":
                out[f"harness_config.seeds.{name}"] = value
    return out


def _inspect(args: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for flag, field in _INSPECT.items():
        value = option_value(args, flag)
        if value is not None:
            out[field] = value
    for i, arg in enumerate(args):  # -T k=v, repeatable (and -Tk=v)
        given = args[i + 1] if arg == "-T" and i + 1 < len(args) else (
            arg[2:] if arg.startswith("-T") and len(arg) > 2 else None)
        if given:
            key, sep, value = given.partition("=")
            if sep and key:
                out[f"harness_config.task_args.{key}"] = value
    return out


def as_apparatus(fields: dict[str, Any]) -> dict[str, Any]:
    """Dotted fields as the nested object a run's apparatus is."""
    out: dict[str, Any] = {}
    for dotted, value in fields.items():
        node = out
        *parents, last = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out
