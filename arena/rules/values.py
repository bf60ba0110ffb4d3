"""Frozen values built at the cost of a plain class (issue 20).

A frozen dataclass refuses ``setattr``, so its generated ``__init__`` sets every field
through ``object.__setattr__``: a global lookup, an attribute lookup and a generic call
per field. The values made at every decision — a seat's view (22 fields), the trick
views, the decision, the events, units and verdicts — paid that about twice over what
setting a slot costs. :func:`quick_init` gives a frozen, slotted dataclass an
``__init__`` with the same signature and defaults that calls each slot's own setter (the
member descriptor's ``__set__``, which a frozen class's ``__setattr__`` does not guard):
the same instance, made in half the time. Equality, hashing, ``repr``,
``dataclasses.replace`` and ``fields`` stay the dataclass's own.

Only the plain case is taken: every field set by ``__init__``, defaults by value, no
``__post_init__``; anything else is refused when the class is defined.

A setter called from Python still goes through a generic call per field (~700 machine
instructions each: a 22-field view cost ~16k). So the ``__init__`` first lends the
instance, for the length of the call, to a twin class with the very same slots and
base but no guard (``object.__setattr__(self, "__class__", twin)``, allowed since the
layouts are the same: checked when the class is defined), sets the fields with plain
stores (which the interpreter specializes to a slot write), and gives it back to its
class: a third of the cost for a view. An instance of a subclass (other slots) takes
the setters, and so does a class of fewer than :data:`LEND_FROM` fields (measured:
a 4-field value costs the same either way).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

LEND_FROM = 8  # fields: below, the two class switches cost more than the setters save


def quick_init(cls: type[T]) -> type[T]:
    """Replace ``cls.__init__`` (a frozen, slotted dataclass; put this decorator above
    ``@dataclass``) by one that sets the slots directly. Raises ``TypeError`` for a
    class it does not fit."""
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not dataclasses.is_dataclass(cls) or vars(cls).get("__slots__") is None:
        raise TypeError(f"{cls.__name__}: quick_init takes a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: quick_init does not run __post_init__")
    base: type = cls.__base__ or object
    twin = type(
        f"_{cls.__name__}Twin",
        (base,),
        {"__slots__": tuple(vars(cls)["__slots__"]), "__setattr__": object.__setattr__},
    )
    probe: Any = object.__new__(twin)
    probe.__class__ = cls  # a layout that differs fails here, when the class is defined
    env: dict[str, Any] = {"_cls": cls, "_twin": twin, "_lend": object.__setattr__}
    lend = len(params) >= LEND_FROM
    args: list[str] = []
    body: list[str] = []
    fast: list[str] = []
    for i, field in enumerate(params):
        if not field.init or field.kw_only or field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{field.name}: quick_init takes plain fields only")
        name = field.name
        env[f"_set{i}"] = _slot(cls, name).__set__  # the slot's own setter
        if field.default is dataclasses.MISSING:
            args.append(name)
        else:
            env[f"_default{i}"] = field.default
            args.append(f"{name}=_default{i}")
        body.append(f"        _set{i}(self, {name})")
        fast.append(f"        self.{name} = {name}")
    source = (
        f"def __init__(self, {', '.join(args)}):\n"
        f"    if {lend} and type(self) is _cls:\n"
        "        _lend(self, '__class__', _twin)\n"
        + "".join(line + "\n" for line in fast)
        + "        self.__class__ = _cls\n"
        "    else:\n"
        + ("\n".join(body) or "        pass")
        + "\n"
    )
    exec(source, env)  # built from the class's own field names, as dataclasses does
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def _slot(cls: type, name: str) -> Any:
    """The member descriptor of slot ``name`` (the class's own, or a base's)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise TypeError(f"{cls.__name__}.{name}: no slot")  # pragma: no cover - a dataclass field


__all__ = ["quick_init"]
