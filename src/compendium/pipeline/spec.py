"""What a stage parameter may be: :class:`Param` (type, bounds, choices, a one-line doc) and the error
that lists every problem of a params file."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable


class ParamsError(ValueError):
    """params.yaml does not fit the schemas; the message lists every problem."""


@dataclass(frozen=True)
class Param:
    """One parameter: its type, allowed values and a one-line doc.

    ``kind`` is one of ``int``, ``float``, ``bool``, ``str``, ``dict`` (its keys checked by ``validate``),
    ``list[int]``, ``list[float]``, ``list[str]``, ``list[dict]``. ``low``/``high`` bound numbers (and list
    items) inclusively; ``choices`` restricts values (and list items). ``validate`` (a value, or list item, -> why it is
    wrong, or None) checks what a type cannot say, e.g. that a string names a prior. ``unique``: a list's
    items must differ; by default true for a list whose key ends in ``seeds`` (a repeated seed would count
    one run twice in a paired comparison), false otherwise.
    """

    kind: str
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    nonempty: bool = False
    validate: Callable[[Any], str | None] | None = None
    unique: bool | None = None

    def check(self, name: str, value: Any) -> list[str]:
        if self.kind.startswith("list["):
            item_kind = self.kind[5:-1]
            if not isinstance(value, list):
                return [f"{name}: expected a list of {item_kind}, got {describe(value)}"]
            if self.nonempty and not value:
                return [f"{name}: must not be empty"]
            unique = self.unique if self.unique is not None else name.rsplit(".", 1)[-1].endswith("seeds")
            repeated = sorted({repr(v) for i, v in enumerate(value) if v in value[:i]}) if unique else []
            errs = [f"{name}: {', '.join(repeated)} given more than once; every item must differ"] if repeated else []
            for i, v in enumerate(value):
                errs += Param(item_kind, self.doc, self.low, self.high, self.choices, validate=self.validate).check(
                    f"{name}[{i}]", v
                )
            return errs
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
            "dict": isinstance(value, dict),
        }.get(self.kind)
        if ok is None:
            raise TypeError(f"schema kind {self.kind!r} of {name} is not supported")
        if not ok:
            return [f"{name}: expected {self.kind}, got {describe(value)}"]
        if self.kind == "float" and not math.isfinite(value):
            return [f"{name}: {value!r} is not a finite number"]
        if self.choices is not None and value not in self.choices:
            return [f"{name}: {value!r} is not one of {list(self.choices)}"]
        if self.low is not None and value < self.low:
            return [f"{name}: {value!r} is below the minimum {self.low}"]
        if self.high is not None and value > self.high:
            return [f"{name}: {value!r} is above the maximum {self.high}"]
        if self.kind == "str" and self.nonempty and not value:
            return [f"{name}: must not be empty"]
        problem = self.validate(value) if self.validate is not None else None
        return [f"{name}: {problem}"] if problem else []


def describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"
