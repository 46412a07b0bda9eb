"""Item traces read from a harness's own per-item records (logbook.ledger.traces keeps them):
lm-eval's samples lines and Inspect's samples, each turned into the trace row of one outcome
row (``id``, ``sample`` when the outcomes have one, ``prompt``, ``output``, ``target``,
``verdict``, ``explanation``). What a record does not hold is left out, never made up.

Texts are cut here already at the format's bound (logbook.format.traces.MAX_TEXT, plus a
margin the append's cut then marks), so a harness log of long transcripts never makes a run
draft of hundreds of megabytes.
"""

from __future__ import annotations

from typing import Any

from logbook.format.traces import MAX_TEXT

_MARGIN = 64  # past MAX_TEXT: the append's cut then says how much was left out
_ROLES_SHOWN = 40  # messages of a chat input shown before the rest is left out


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value
    elif isinstance(value, (int, float, bool)):
        text = str(value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        text = "\n".join(value)
    else:
        return None
    return text[:MAX_TEXT + _MARGIN]


def _row(item: str, sample: int | None, **texts: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {"id": item}
    if sample is not None:
        row["sample"] = sample
    row.update({k: v for k, v in texts.items() if v is not None})
    return row


# lm-eval ------------------------------------------------------------------------------------

def _lm_eval_args(line: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(context, continuation or generation settings) of each request of one samples line:
    ``arguments`` is ``{"gen_args_0": {"arg_0": ..., "arg_1": ...}, ...}`` (0.4.x) or a list
    of ``[arg_0, arg_1]`` pairs (earlier)."""
    args = line.get("arguments")
    if isinstance(args, dict):
        out = []
        for key in sorted(args, key=lambda k: int(k.rsplit("_", 1)[-1]) if k.rsplit("_", 1)[-1]
                          .isdigit() else 0):
            a = args[key]
            if isinstance(a, dict):
                out.append((a.get("arg_0"), a.get("arg_1")))
        return out
    if isinstance(args, list):
        return [(a[0], a[1] if len(a) > 1 else None) for a in args
                if isinstance(a, list) and a]
    return []


def lm_eval_trace(item: str, line: dict[str, Any], metric: str) -> dict[str, Any]:
    """One lm-eval samples line as a trace: the first request's context as the prompt; a
    generation's filtered response as the output; for a choice among continuations (the
    log-likelihood requests) the continuation the model ranked first, and the target's
    continuation when the target is its index."""
    requests = _lm_eval_args(line)
    prompt = _text(requests[0][0]) if requests else None
    choices = [c for _, c in requests]
    target = _text(line.get("target"))
    filtered = line.get("filtered_resps")
    output = None
    if isinstance(filtered, list) and filtered and all(isinstance(c, str) for c in choices) \
            and len(filtered) == len(choices) and len(choices) > 1:
        lls = [_loglik(r) for r in filtered]
        if all(ll is not None for ll in lls):
            best = max(range(len(lls)), key=lambda i: lls[i])  # type: ignore[arg-type, return-value]
            output = _text(f"{choices[best]!s} (choice {best}, log-likelihood {lls[best]:.4g})")
        if target is not None and target.strip().isdigit() and int(target) < len(choices):
            target = _text(f"{choices[int(target)]!s} (choice {int(target)})")
    elif isinstance(filtered, list) and filtered:
        output = _text(filtered[0])
    else:
        output = _text(filtered)
    value = line.get(metric)
    verdict = None if value is None else _text(f"{metric} = {value}")
    return _row(item, None, prompt=prompt, output=output, target=target, verdict=verdict)


def _loglik(resp: Any) -> float | None:
    """The log-likelihood of one filtered response (``[ll, is_greedy]``, numbers or their
    text)."""
    first = resp[0] if isinstance(resp, list) and resp else resp
    try:
        return float(first)
    except (TypeError, ValueError):
        return None


# Inspect --------------------------------------------------------------------------------------

def inspect_prompt(value: Any) -> str | None:
    """A sample's input: text, or chat messages shown one a paragraph as ``role: text``."""
    if isinstance(value, str):
        return _text(value)
    if not isinstance(value, list):
        return None
    parts = []
    for m in value[:_ROLES_SHOWN]:
        if isinstance(m, dict):
            parts.append(f"{m.get('role', '?')}: {_content(m.get('content'))}")
    if len(value) > _ROLES_SHOWN:
        parts.append(f"[… {len(value) - _ROLES_SHOWN} more messages]")
    return _text("\n\n".join(parts))


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: text, images, tool calls...
        return " ".join(c.get("text", f"[{c.get('type', 'part')}]") if isinstance(c, dict)
                        else str(c) for c in content)
    return ""


def inspect_output(output: Any) -> str | None:
    """A sample's model output: its completion, else its first choice's message text."""
    if not isinstance(output, dict):
        return None
    if isinstance(output.get("completion"), str) and output["completion"]:
        return _text(output["completion"])
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return _text(_content(message.get("content")))
    return None


def inspect_trace(item: str, epoch: int | None, sample: dict[str, Any],
                  scorer: str) -> dict[str, Any]:
    """One Inspect sample, as kept by the adapter (``trace``: prompt, output, target and each
    scorer's value, answer and explanation), as the trace of scorer ``scorer``'s row."""
    kept = sample.get("trace") or {}
    score = (kept.get("scores") or {}).get(scorer) or {}
    value = score.get("value")
    verdict = None if value is None else _text(
        f"{value}" + (f" (answer: {score['answer']})" if score.get("answer") else ""))
    return _row(item, epoch, prompt=kept.get("prompt"), output=kept.get("output"),
                target=kept.get("target"), verdict=verdict,
                explanation=_text(score.get("explanation")))


def inspect_kept(raw: dict[str, Any]) -> dict[str, Any]:
    """What a trace needs from one raw Inspect sample (the rest is let go at once)."""
    target = raw.get("target")
    given = raw.get("scores")
    scores: dict[str, Any] = given if isinstance(given, dict) else {}
    return {"prompt": inspect_prompt(raw.get("input")),
            "output": inspect_output(raw.get("output")),
            "target": _text(target),
            "scores": {name: {"value": _text(_value(s.get("value"))),
                              "answer": _text(s.get("answer")),
                              "explanation": _text(s.get("explanation"))}
                       for name, s in scores.items() if isinstance(s, dict)}}


def _value(value: Any) -> Any:
    """A score's value as a verdict shows it: a dict of several values as its text."""
    return str(value) if isinstance(value, (dict, list)) else value
