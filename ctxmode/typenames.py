"""The `typing` names that the modules of a hook process annotate with, without `typing`.

A hook is a whole process on every tool call. Importing `typing` costs it about 3 ms, and
each `typing.NamedTuple` class about 0.1 ms more (`collections.namedtuple` compiles a
constructor per class). Type checkers see `typing`'s own names here. At run time an
annotation needs only a value, and a class statement

    class Output(NamedTuple):
        stdout: str | None = None
        exit_code: int = 0

builds a tuple subclass with what `typing.NamedTuple` gives: positional and keyword
construction with defaults, ``_fields``, ``_field_defaults``, ``_make``, ``_replace``,
``_asdict``, the same repr, equality, hashing, pickling and pattern matching, and the
class body's methods, properties and docstring.

Standard library only, and only `operator` at import (which `re` loads anyway).
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any as Any
    from typing import Literal as Literal
    from typing import NamedTuple as NamedTuple
else:
    from operator import itemgetter

    class _Form:
        """`Any` and `Literal[...]` at run time: values an annotation may hold."""

        def __getitem__(self, _params):
            return self

        def __or__(self, _other):  # `Any | None`, `Literal["a"] | int`
            return self

        __ror__ = __or__

    Any = Literal = _Form()

    class _Record(tuple):
        """What every record class shares (only its fields are its own)."""

        __slots__ = ()
        _fields: tuple = ()
        _field_defaults: dict = {}

        def __new__(cls, *args, **kwargs):
            if kwargs or len(args) != len(cls._fields):
                args = cls._bind(args, kwargs)
            return tuple.__new__(cls, args)

        @classmethod
        def _bind(cls, args, kwargs):
            fields = cls._fields
            if len(args) > len(fields):
                raise TypeError(
                    f"{cls.__name__}() takes {len(fields)} positional arguments"
                    f" but {len(args)} were given"
                )
            values = list(args)
            for field in fields[len(args) :]:
                if field in kwargs:
                    values.append(kwargs.pop(field))
                elif field in cls._field_defaults:
                    values.append(cls._field_defaults[field])
                else:
                    raise TypeError(f"{cls.__name__}() missing required argument: {field!r}")
            for name in kwargs:
                problem = "multiple values for" if name in fields else "an unexpected keyword"
                raise TypeError(f"{cls.__name__}() got {problem} argument {name!r}")
            return values

        @classmethod
        def _make(cls, iterable):
            made = tuple.__new__(cls, iterable)
            if len(made) != len(cls._fields):
                raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(made)}")
            return made

        def _replace(self, /, **changes):
            made = tuple.__new__(
                type(self), [changes.pop(f, v) for f, v in zip(self._fields, self, strict=True)]
            )
            if changes:
                raise TypeError(f"Got unexpected field names: {list(changes)!r}")
            return made

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        def __repr__(self):
            inner = ", ".join(f"{f}={v!r}" for f, v in zip(self._fields, self, strict=True))
            return f"{type(self).__name__}({inner})"

        def __getnewargs__(self):
            return tuple(self)

    class _RecordType(type):
        """The metaclass of `NamedTuple` alone: each subclass is built as a `_Record`."""

        def __new__(mcls, name, bases, namespace):
            if bases != (NamedTuple,):
                raise TypeError("a NamedTuple class inherits from NamedTuple alone")
            fields = tuple(namespace.get("__annotations__", ()))
            defaults = {}
            for field in fields:
                if field in namespace:
                    defaults[field] = namespace[field]
                elif defaults:
                    raise TypeError(f"{name}: field {field!r} without a default follows one with")
            body = {key: value for key, value in namespace.items() if key not in fields}
            body.setdefault("__doc__", f"{name}({', '.join(fields)})")
            body.update(
                __slots__=(), _fields=fields, _field_defaults=defaults, __match_args__=fields
            )
            for index, field in enumerate(fields):
                body[field] = property(itemgetter(index), doc=f"Alias for field number {index}")
            return type(name, (_Record,), body)

    NamedTuple = type.__new__(_RecordType, "NamedTuple", (), {"__module__": __name__})
