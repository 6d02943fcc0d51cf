"""`ctxmode.typenames.NamedTuple` behaves as `typing.NamedTuple` wherever ctxmode uses it."""

import copy
import pickle
import typing

import pytest

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.typenames import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()

    @property
    def norm(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> "Point":
        return self._replace(x=self.x + dx)


class TypedPoint(typing.NamedTuple):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


def test_fields_defaults_and_construction_match_typing():
    for cls in (Point, TypedPoint):
        assert cls._fields == ("x", "y", "tags")
        assert cls._field_defaults == {"y": 0, "tags": ()}
        assert cls(1) == (1, 0, ())
        assert cls(1, tags=("a",)) == (1, 0, ("a",))
        assert cls(x=2, y=3) == (2, 3, ())
        assert cls._make([4, 5, ()]) == (4, 5, ())
        assert cls(1, 2)._asdict() == {"x": 1, "y": 2, "tags": ()}
        assert cls(1)._replace(y=9) == (1, 9, ())
        assert cls.__match_args__ == ("x", "y", "tags")
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=())"
    assert repr(Point(1, 2)).replace("Point", "TypedPoint") == repr(TypedPoint(1, 2))


def test_the_class_body_is_kept():
    point = Point(3, -4)
    assert point.norm == 7
    assert point.moved(1) == Point(4, -4)
    assert type(point.moved(1)) is Point
    assert Point.__doc__ == "A point."
    assert Point.__module__ == __name__
    assert Point.__qualname__ == "Point"


def test_it_is_a_tuple_hashes_compares_and_unpacks():
    point = Point(1, 2)
    x, y, tags = point
    assert (x, y, tags) == (1, 2, ())
    assert isinstance(point, tuple)
    assert hash(point) == hash((1, 2, ()))
    assert point == (1, 2, ()) and point != Point(2, 1)
    assert point[0] == 1 and point[-1] == ()
    with pytest.raises(AttributeError):
        point.x = 5  # type: ignore[misc]  # read-only field, as typing's
    with pytest.raises(AttributeError):
        point.other = 5  # type: ignore[attr-defined]  # no instance dict: __slots__ = ()


def test_pickle_copy_and_match():
    point = Point(1, 2, ("a",))
    assert pickle.loads(pickle.dumps(point)) == point
    assert type(pickle.loads(pickle.dumps(point))) is Point
    assert copy.deepcopy(point) == point and copy.copy(point) == point
    match point:
        case Point(1, y, tags):
            assert (y, tags) == (2, ("a",))
        case _:
            pytest.fail("positional pattern did not match")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Point(), "missing required argument: 'x'"),
        (lambda: Point(1, x=2), "multiple values for argument 'x'"),
        (lambda: Point(1, z=2), "unexpected keyword argument 'z'"),
        (lambda: Point(1, 2, (), 4), "takes 3 positional arguments but 4 were given"),
        (lambda: Point(1)._replace(z=1), "unexpected field names: ['z']"),
        (lambda: Point._make([1]), "Expected 3 arguments, got 1"),
    ],
)
def test_wrong_arguments_are_type_errors(make, message):
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make()


def test_a_field_without_a_default_cannot_follow_one_with():
    with pytest.raises(TypeError, match="'y' without a default"):

        class Bad(NamedTuple):
            x: int = 0
            y: int


def test_the_hook_records_share_their_empty_defaults_read_only():
    event = HookEvent("claude-code", "pre_tool", "pretooluse")
    assert event.tool_input == {} and event.paths == ()
    assert HookDecision().kind == "allow" and not HookDecision().blocks
    assert HookDecision("deny", "no").blocks
    assert event._replace(tool="Bash").tool == "Bash"


def test_annotations_using_the_names_evaluate_at_run_time():
    from ctxmode.typenames import Any, Literal

    def annotated(a: Any | None, b: None | Literal[1, 2], c: dict[str, Any]) -> Any:
        return a

    assert annotated(1, None, {}) == 1
