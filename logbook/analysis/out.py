"""The base of every command output's shape: a dataclass whose ``as_json`` gives the JSON the
command prints, and from which ``json_schema`` derives its JSON Schema (through pydantic,
imported only then). The report's shapes are in `report_shapes` (an arm's in `arm_shapes`),
the brief's in `brief_shapes`.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, Literal


class _Absent:
    """A field the output leaves out, as opposed to one it gives as null."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
INTERNAL = {"json": False, "schema": False}  # neither printed nor in the schema
EXTRA_KEY = {"schema": False}  # printed when set; the schema leaves it to additionalProperties
# a field's metadata may also carry "limits": pydantic Field constraints its schema states


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _json(value: Any) -> Any:
    if type(value) in _PLAIN:  # most values: nothing to convert
        return value
    if isinstance(value, Out):
        return value.as_json()
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


# each shape's printed fields, in declaration order: (attribute, JSON key), worked out once
_PRINTED: dict[type, tuple[tuple[str, str], ...]] = {}


@dataclass(kw_only=True, eq=False)
class Out:
    """A part of a command's output: ``as_json`` gives its fields in declaration order, less
    those left ABSENT. ``EXTRA`` is what the schema says of keys it does not name."""

    EXTRA: ClassVar[Literal["forbid", "allow"]] = "forbid"

    def as_json(self) -> dict[str, Any]:
        printed = _PRINTED.get(type(self))
        if printed is None:
            printed = _PRINTED[type(self)] = tuple(
                (f.name, f.metadata.get("json", f.name)) for f in fields(self)
                if f.metadata.get("json", f.name) is not False)
        out: dict[str, Any] = {}
        for name, key in printed:
            value = getattr(self, name)
            if value is not ABSENT:
                out[key] = _json(value)
        return out


def _swap(t: Any, models: dict[Any, Any]) -> Any:
    """A field's type with each shape replaced by its pydantic model."""
    import functools
    import operator
    import types
    import typing

    if t in models:
        return models[t]
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin in (types.UnionType, typing.Union):
        return functools.reduce(operator.or_, [_swap(a, models) for a in args])
    if origin in (list, dict):
        return origin[tuple(_swap(a, models) for a in args)]
    return t


def _model(shape: type[Out], models: dict[Any, Any]) -> Any:
    """The pydantic model of a shape: its fields (less those kept out of the schema), its
    docstring as the description, its EXTRA policy; an ABSENT field defaults to null."""
    import inspect
    import typing

    from pydantic import ConfigDict, Field, create_model

    hints = typing.get_type_hints(shape)
    defined: dict[str, Any] = {}
    for f in fields(shape):
        if not f.metadata.get("schema", True):
            continue
        if f.default is ABSENT:
            default: Any = None
        elif f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = ...
        alias = f.metadata.get("json")
        limits = f.metadata.get("limits", {})  # pydantic Field constraints, for the schema
        defined[f.name] = (_swap(hints[f.name], models),
                           Field(default, alias=alias, **limits) if alias or limits
                           else default)
    generated = shape.__name__ + str(inspect.signature(shape)).replace(" -> None", "")
    doc = None if shape.__doc__ == generated else shape.__doc__
    return create_model(shape.__name__, __config__=ConfigDict(extra=shape.EXTRA), __doc__=doc,
                        **defined)


def json_schema(root: type[Out], shapes: tuple[type[Out], ...], schema_id: str
                ) -> dict[str, Any]:
    """The JSON Schema of ``root``; ``shapes`` lists every shape it holds, each after the
    shapes it holds itself (``root`` last)."""
    models: dict[Any, Any] = {}
    for shape in shapes:
        models[shape] = _model(shape, models)
    schema: dict[str, Any] = models[root].model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = schema_id
    return schema
