"""Bad input: one clear paragraph naming the file/line, option or state; exit code 2."""

from __future__ import annotations

import json

import pytest

from modelcheck.cli import cli

BAD = "tests/bad_specs"


def run(runner, *args: str):
    result = runner.invoke(cli, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


@pytest.mark.parametrize(
    "target, needles",
    [
        (f"{BAD}/raises_in_action.py",
         ["raises_in_action.py:20", "action Inc", "ValueError", "corrupt", "x=2"]),
        (f"{BAD}/nonbool_guard.py", ["nonbool_guard.py:9", "guard of action Inc", "not a boolean"]),
        # no guard at all (None): the same error, not the batch narrowing's sentinel
        (f"{BAD}/no_return.py", ["no_return.py:9", "guard of action Inc returned None",
                                 "not a boolean"]),
        (f"{BAD}/out_of_domain.py",
         ["out_of_domain.py:9", "action Inc assigns x = 4", "domain 0..3", "[x=3]"]),
        (f"{BAD}/raises_in_invariant.py",
         ["raises_in_invariant.py:17", "invariant Broken", "KeyError", "[x=0]"]),
        (f"{BAD}/no_init.py", ["no_init.py:14", "no initial state"]),
        (f"{BAD}/python_if.py", ["python_if.py:12", "where(cond, a, b)"]),
        (f"{BAD}/syntax_error.py", ["syntax_error.py:5", "syntax error"]),
        (f"{BAD}/bad_signature.py", ["bad_signature.py:10", "def Inc(self, s, t, p)"]),
        (f"{BAD}/unknown_variable.py", ["unknown_variable.py:11", "unknown variable 'y'"]),
        (f"{BAD}/huge_int.py", ["huge_int.py:6", "variable v", "is too large", "2**63 - 1"]),
        # a wide state is shown by variable (its 40-slot queue as the three records it
        # holds), not as its 121 cells
        (f"{BAD}/wide_out_of_domain.py",
         ["wide_out_of_domain.py:13", "action Bump assigns epoch = 4", "domain 0..3",
          "queue=[[src: 1, epoch: 2, offset: 3], [src: 1, epoch: 2, offset: 3], "
          "[src: 1, epoch: 2, offset: 3]], epoch=3]"]),
        ("specs/no_such_spec.py", ["does not exist"]),
        ("specs.no_such_module", ["not found"]),
        ("specs/kraft_broker.py:NoSuchSpec", ["no spec named 'NoSuchSpec'", "KRaftBroker"]),
    ],
)
def test_spec_errors(runner, target: str, needles: list[str]) -> None:
    r = run(runner, "check", target, "-q")
    assert r.exit_code == 2, r.output
    for n in needles:
        assert n in r.output, (n, r.output)
    assert r.output.count("\n") <= 2  # one paragraph


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--const", "Nope=3"], ["unknown constant 'Nope'", "MaxLog=4"]),
        (["--const", "N=three"], ["N is an integer", "'three'"]),
        (["--const", "N"], ["expected NAME=VALUE"]),
        (["--const", "N=0"], ["must be >= 1"]),
        (["--invariant", "NoSuchInvariant"], ["--invariant NoSuchInvariant", "UniqueEpochs"]),
        (["--deadlock", "--no-deadlock"], ["contradict"]),
    ],
)
def test_option_errors(runner, args: list[str], needles: list[str]) -> None:
    r = run(runner, "check", "specs/kraft_broker.py", "-q", *args)
    assert r.exit_code == 2, r.output
    for n in needles:
        assert n in r.output, (n, r.output)


def test_json_error_contract(runner) -> None:
    r = run(runner, "check", f"{BAD}/out_of_domain.py", "-q", "--format", "json")
    assert r.exit_code == 2
    payload = json.loads(r.stdout)
    assert payload["status"] == "error"
    assert "outside its declared domain" in payload["error"]


def test_definition_errors_are_raised_at_class_definition() -> None:
    from modelcheck import Const, Int, Spec, SpecDefinitionError, action

    with pytest.raises(SpecDefinitionError, match="declared twice"):
        class Clash(Spec):
            x = Int(0, 1)

            @action
            def x(self, s, t):  # type: ignore[no-redef]  # noqa: F811
                return True

    with pytest.raises(SpecDefinitionError, match="symmetry names 'Nope'"):
        class BadSym(Spec):
            symmetry = ("Nope",)
            N = Const(2)
            x = Int(0, 1)

    with pytest.raises(SpecDefinitionError, match="invariant Inv must take"):
        from modelcheck import invariant

        class BadInv(Spec):
            x = Int(0, 1)

            @invariant
            def Inv(self, s, t):
                return True
