"""Record fields that spec code could not read as ``r.field`` are refused when the spec
class is defined: a name of the record value's own attributes (``type``, ``columns``,
``select``, ``with_fields``, ...), an underscore name, a keyword, a non-identifier.

Such a field used to be accepted, and ``s.m.type`` then read the value's own
attribute (its bound type) instead of the field.
"""

from __future__ import annotations

import textwrap

import pytest

from modelcheck import (
    Array,
    Bag,
    Ids,
    Int,
    Record,
    Seq,
    SetOf,
    Spec,
    SpecDefinitionError,
    action,
    explore,
    invariant,
)
from modelcheck.cli import cli
from modelcheck.values import RecordValue


def _value_attributes() -> set[str]:
    """Every name a record value answers by itself (not through its fields): the names
    of a real value, its class's and its instance's."""
    bound = Record(a=Int(0, 1)).bound({})
    value = RecordValue(bound, {"a": 0})  # type: ignore[arg-type]
    return set(dir(value)) | set(vars(value))


def _spec_with(typ: object) -> type[Spec]:
    return type("Fields", (Spec,), {"m": typ, "A": action(lambda self, s, t: True)})


SHADOWING = sorted(_value_attributes())


def test_the_attributes_include_the_known_ones() -> None:
    assert {"type", "columns", "select", "with_fields", "_fields", "__eq__"} <= set(SHADOWING)


@pytest.mark.parametrize("field", SHADOWING)
def test_every_attribute_of_a_record_value_is_refused(field: str) -> None:
    with pytest.raises(SpecDefinitionError) as e:
        _spec_with(Record(**{field: Int(0, 1), "n": Int(0, 1)}))
    msg = str(e.value)
    assert "spec Fields, variable m: the record" in msg
    assert f"has a field {field!r}" in msg and "rename the field" in msg


@pytest.mark.parametrize("field, why", [
    ("from", "is a Python keyword"),
    ("a-b", "is not a Python identifier"),
    ("_hidden", "starts with an underscore"),
])
def test_fields_not_readable_as_attributes_are_refused(field: str, why: str) -> None:
    with pytest.raises(SpecDefinitionError, match=why):
        _spec_with(Record(**{field: Int(0, 1)}))


@pytest.mark.parametrize("wrap", [
    lambda r: r,
    lambda r: Array(Ids(1, 2), r),
    lambda r: SetOf(r),
    lambda r: Seq(r, 2),
    lambda r: Bag(r, 2),
    lambda r: Record(inner=r, x=Int(0, 1)),
    lambda r: Array(Ids(1, 2), Seq(Record(outer=r), 1)),
], ids=["record", "array", "set", "seq", "bag", "nested", "deep"])
def test_refused_wherever_the_record_is(wrap) -> None:
    with pytest.raises(SpecDefinitionError, match="has a field 'type'"):
        _spec_with(wrap(Record(type=Int(0, 1))))


class Ok(Spec):
    """Fields whose names resemble the reserved ones are fine."""

    check_deadlock = False
    m = Record(kind=Int(0, 2), types=Int(0, 1), selected=Int(0, 1))

    @action
    def Up(self, s, t):
        t.m = s.m.with_fields(kind=s.m.kind + 1, selected=1)
        return s.m.kind < 2

    @invariant
    def Read(self, s):
        return (s.m.kind <= 2) & (s.m.types == 0)


def test_ordinary_fields_work() -> None:
    r = explore(Ok())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 3, 2)


def test_cli_names_the_file_the_spec_and_the_field(runner, tmp_path) -> None:
    p = tmp_path / "typed.py"
    p.write_text(textwrap.dedent('''
        from modelcheck import Int, Record, Spec, action

        Msg = Record(type=Int(0, 1), n=Int(0, 1))


        class Typed(Spec):
            msg = Msg

            @action
            def Step(self, s, t):
                return s.msg.type == 0
    '''))
    r = runner.invoke(cli, ["check", str(p), "-q"])
    assert r.exit_code == 2
    assert "typed.py:" in r.output and "spec Typed, variable msg" in r.output
    assert "has a field 'type'" in r.output and "Traceback" not in r.output
