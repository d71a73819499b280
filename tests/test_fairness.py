"""Fairness declarations: the decorator's and the class table's conditions are conjoined,
and the table is resolved when the spec is bound with its constants (``--const``), against
a brute-force fair-cycle search given the fairness as TLA+ defines it (:mod:`tests.fairspec`,
:func:`tests.livespec.oracle_verdicts`), never through :mod:`modelcheck.fairness`."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from examples.token_ring import Ring, RingComputed, RingEvery, RingUnfair
from modelcheck import Array, Bool, Const, Ids, Int, Spec, action, check, check_liveness, where
from modelcheck.errors import SpecDefinitionError
from modelcheck.kernel import Kernel
from modelcheck.loader import parse_consts
from modelcheck.temporal import always_eventually, fairness_conditions
from tests.fairspec import fair_spec, meaning
from tests.lassocheck import check_lasso_generic
from tests.livespec import Conditions, Selected, _graph, check_lasso, member, oracle_verdicts

ROOT = Path(__file__).resolve().parent.parent
HERE = "tests/test_fairness.py"
RING = "examples/token_ring.py"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "modelcheck", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def _bind(cls: type[Spec], consts: dict[str, int]) -> Spec:
    """Bind as ``--const K=V`` does (the text parsed, then the class called)."""
    known = {n: c.default for n, c in cls._consts.items()}
    return cls(**parse_consts(tuple(f"{k}={v}" for k, v in consts.items()), known))


def _conds(spec: Spec, select: tuple[str, ...] | None = None) -> Conditions:
    """The checker's conditions as (kind, instance labels) pairs, for comparison."""
    return [(c.kind, frozenset(spec.actions[i].label for i in c.action_ids))
            for c in fairness_conditions(spec, select)]


# ------------------------------------------------- item 1: the decorator and the table
class Sets(Spec):
    """``A(i)`` sets ``x[i]``, ``B(i)`` clears it: ``WF(A(i))`` for every ``i`` (the
    decorator) and ``WF(\\E i: A(i))`` (the table). Under the per-instance condition
    ``[]<>(x[2] = 1)`` holds (``A(2)`` is enabled whenever ``x[2] = 0``); under the
    family one alone, ``A(1), B(1)`` forever is fair and violates it."""

    check_deadlock = False
    N = Const(2, min=2, max=3)
    P = Ids(1, N)
    x = Array(P, Int(0, 1))
    fairness = {"A": "weak-family"}

    @action(i=P, fair="weak")
    def A(self, s, t, i):
        t.x[i] = 1
        return s.x[i] == 0

    @action(i=P)
    def B(self, s, t, i):
        t.x[i] = 0
        return s.x[i] == 1

    @always_eventually
    def TwoSet(self, s):
        return s.x[2] == 1


def _sets_oracle(spec: Spec) -> Conditions:
    n = spec.constants["N"]
    per = [("weak", frozenset([f"A({i})"])) for i in range(1, n + 1)]
    return [*per, ("weak", frozenset(f"A({i})" for i in range(1, n + 1)))]


@pytest.mark.parametrize("n", [2, 3])
def test_the_table_adds_to_the_decorator(n):
    spec = _bind(Sets, {"N": n})
    two = lambda v: v.x[2] == 1  # noqa: E731
    Sets._oracle = {"props": {"TwoSet": ("always_eventually", two, two, None, None)}}
    assert set(_conds(spec)) == set(_sets_oracle(spec))
    assert oracle_verdicts(spec, _sets_oracle(spec)) == {"TwoSet": True}
    r = check_liveness(spec)
    assert r.status == "ok" and r.liveness["properties"] == {"TwoSet": "holds"}


def test_the_table_adds_to_the_decorator_cli():
    r = _cli("check", f"{HERE}:Sets", "--const", "N=3", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "TwoSet  []<>P  holds\n" in r.stdout
    assert "\nFairness: WF(A(i=1)), WF(A(*)), WF(A(i=2)), WF(A(i=3))\n" in r.stdout


# ------------------------------------------------- item 2: resolved when bound
def test_labels_written_for_the_defaults_are_refused_under_other_constants():
    assert check_liveness(_bind(Ring, {})).liveness["properties"] == {"BackToOne": "holds"}
    with pytest.raises(SpecDefinitionError, match=r"Pass\(i=1\), Pass\(i=2\): every instance "
                       r"of Pass under the default constants \(N=2\) but not Pass\(i=3\)"):
        _bind(Ring, {"N": 3})
    with pytest.raises(SpecDefinitionError, match=r"'Pass\(i=2\)', which is no instance of "
                       r"Pass under these constants; its instances are Pass\(i=1\)"):
        _bind(Ring, {"N": 1})
    for cls in (RingEvery, RingComputed):
        for n in (1, 3, 4):
            spec = _bind(cls, {"N": n})
            want = [("weak", frozenset([f"Pass({i})"])) for i in range(1, n + 1)]
            assert _conds(spec) == want
            assert check_liveness(spec).liveness["properties"] == {"BackToOne": "holds"}
        assert _conds(_bind(RingUnfair, {"N": n})) == [("weak", frozenset(["Pass(1)"]))]


def test_labels_are_resolved_when_bound_cli():
    r = _cli("check", f"{RING}:Ring", "--const", "N=3", "-q")
    assert r.returncode == 2 and "but not Pass(i=3) under these" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    r = _cli("check", f"{RING}:RingComputed", "--const", "N=3", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BackToOne  []<>P  holds\n" in r.stdout
    assert "\nFairness: WF(Pass(i=1)), WF(Pass(i=2)), WF(Pass(i=3))\n" in r.stdout


# ------------------------------------------------- every form, against the oracle
def _oracle_props(n: int) -> dict:
    """The properties of :func:`tests.fairspec.fair_spec`, on the oracle's scalar views
    (form, P, Q, no selection, not over steps)."""
    first, last, clear = (lambda v: v.b[1]), (lambda v: v.b[n]), (lambda v: ~v.b[1])
    return {"AlwaysFirst": ("always_eventually", first, first, None, None),
            "AlwaysLast": ("always_eventually", last, last, None, None),
            "SettlesClear": ("eventually_always", clear, clear, None, None),
            "LastSet": ("eventually", last, last, None, None),
            "FirstThenClear": ("leads_to", first, clear, None, None),
            "Selected": ("always_eventually", last, last, None, None)}


def _checker_conds(spec: Spec, select: tuple[str, ...] | None = None) -> Conditions:
    """The checker's conditions as (kind, labels or :class:`Selected`) pairs: a condition
    the state selects keeps an instance where its guards (the checker's predicates of
    the selector) hold."""
    out: Conditions = []
    for c in fairness_conditions(spec, select):
        labels = frozenset(spec.actions[i].label for i in c.action_ids)
        if not c.guards:
            out.append((c.kind, labels))
            continue
        guards = {spec.actions[a].label: names for a, names in c.guards}
        decls = {p.name: p.decl for p in c.predicates}

        def pick(view, lab, guards=guards, decls=decls):
            return all(bool(decls[n].fn(spec, view)) for n in guards.get(lab, ()))

        out.append((c.kind, Selected(labels, pick)))
    return out


def _semantic(spec: Spec, conds: Conditions) -> set:
    """Each condition as the (reachable state, instance) pairs whose steps it counts."""
    states, _, _ = _graph(spec)
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    views = [k.scalar_view(list(c)) for c in states]
    out = set()
    for kind, c in conds:
        labels = c.labels if isinstance(c, Selected) else c
        out.add((kind, frozenset((u, lab) for u, v in enumerate(views) for lab in labels
                                 if member(c, v, lab))))
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fair_spec())
def test_random_fairness_declarations_against_the_fair_cycle_search(cls):
    d = cls._drawn
    want = meaning(d)
    consts = {} if d.bound == d.default else {"N": d.bound}
    if want is None:
        with pytest.raises(SpecDefinitionError):
            _bind(cls, consts)
        return
    spec = _bind(cls, consts)
    want = meaning(d, spec=spec)
    assert _semantic(spec, _checker_conds(spec)) == _semantic(spec, want), str(d.__dict__)
    selected = meaning(d, d.select, spec=spec)
    assert _semantic(spec, _checker_conds(spec, d.select)) == _semantic(spec, selected), \
        str(d.__dict__)
    props = _oracle_props(d.bound)
    cls._oracle = {"props": {k: v for k, v in props.items() if k != "Selected"}}
    expected = oracle_verdicts(spec, want)
    cls._oracle = {"props": {"Selected": props["Selected"]}}
    expected.update(oracle_verdicts(spec, selected))
    cls._oracle = {"props": props}
    r = check_liveness(spec)
    got = {k: v == "holds" for k, v in r.liveness["properties"].items()}
    assert got == expected, (d.__dict__, r.violation)
    if r.violation is not None:
        prop = r.violation.property
        check_lasso(spec, r.violation, selected if prop == "Selected" else want)


# ------------------------------------- the table of forms in docs/liveness.md
LIVENESS_PAGE = ROOT / "docs" / "liveness.md"


def readme_forms() -> list[tuple[str, str]]:
    """The (declaration, TLA+) rows of the table of fairness forms (docs/liveness.md)."""
    lines = LIVENESS_PAGE.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("<!-- fairness-forms"))
    rows = []
    for line in lines[i + 3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append((cells[0], cells[1].strip("`")))
    return rows


def _declared(text: str, n: int) -> Spec:
    """The spec of a row's declaration: ``A(p)`` sets ``x[p]``, ``B(p)`` clears it."""
    fair = dict(re.findall(r'`@action\(p=P, fair="([\w-]+)"\)` on `(\w+)`', text))
    fair = {v: k for k, v in fair.items()}
    table = re.search(r"`fairness = (\{.*?\})`", text)
    N = Const(2, min=1)  # noqa: N806
    P = Ids(1, N)  # noqa: N806

    def A(self, s, t, p):
        t.x[p] = 1
        return s.x[p] == 0

    def B(self, s, t, p):
        t.x[p] = 0
        return s.x[p] == 1

    ns = {"check_deadlock": False, "N": N, "P": P, "x": Array(P, Int(0, 1)),
          "A": action(p=P, fair=fair.get("A"))(A), "B": action(p=P, fair=fair.get("B"))(B),
          "fairness": ast.literal_eval(table.group(1)) if table else {}}
    return _bind(type("Row", (Spec,), ns), {"N": n})


def _tla(formula: str, n: int) -> Conditions:
    """A row's TLA+ formula as (kind, instance labels) pairs, over ``P = 1..n``."""
    out: Conditions = []
    for conj in formula.split(" /\\ "):
        m = re.fullmatch(r"\\A p \\in P: (.*)", conj)
        bodies = [m.group(1).replace("(p)", f"({v})") for v in range(1, n + 1)] if m \
            else [conj]
        for body in bodies:
            kind, inner = re.fullmatch(r"(WF|SF)_vars\((.*)\)", body).groups()
            e = re.fullmatch(r"\\E p \\in P: (.*)", inner)
            parts = ([d.replace("(p)", f"({v})") for v in range(1, n + 1)
                      for d in e.group(1).split(" \\/ ")] if e else inner.split(" \\/ "))
            out.append(("weak" if kind == "WF" else "strong", frozenset(parts)))
    return out


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("declaration, formula", readme_forms())
def test_readme_fairness_forms(declaration, formula, n):
    assert len(readme_forms()) >= 8
    spec = _declared(declaration, n)
    assert set(_conds(spec)) == set(_tla(formula, n))
    assert len(_conds(spec)) == len(set(_tla(formula, n)))


# ------------------------------------------------- inheritance
class RingPassFair(Ring):
    fairness = {}

    @action(i=Ring.P, fair="weak")
    def Pass(self, s, t, i):
        t.tok = where(s.tok == self.N, 1, s.tok + 1)
        return s.tok == i


class RingPassRedefined(RingPassFair):
    """A variant redefining ``Pass`` (as a bug variant does) without ``fair=``: TLA+'s
    ``WF_vars(Pass(i))`` names the action, so the variant keeps it."""

    @action(i=Ring.P)
    def Pass(self, s, t, i):
        t.tok = where(s.tok == 1, self.N, s.tok - 1)  # the other way round
        return s.tok == i


class RingPassDropped(RingPassFair):
    @action(i=Ring.P, fair=None)  # says there is none
    def Pass(self, s, t, i):
        t.tok = where(s.tok == self.N, 1, s.tok + 1)
        return s.tok == i


class RingBoth(RingPassDropped, RingPassRedefined):
    """``Pass`` is RingPassDropped's (the MRO), whose ``fair=None`` overrides."""


def test_an_override_without_fair_keeps_the_overridden_actions_fairness():
    for cls, fair in ((RingPassFair, True), (RingPassRedefined, True),
                      (RingPassDropped, False), (RingBoth, False)):
        for n in (2, 3):
            spec = _bind(cls, {"N": n})
            want = [("weak", frozenset([f"Pass({i})"])) for i in range(1, n + 1)] if fair \
                else []
            assert _conds(spec) == want, cls
            verdict = check_liveness(spec).liveness["properties"]["BackToOne"]
            assert verdict == ("holds" if fair else "violated"), cls


# ------------------------------------------------- a property's fairness=(...)
class RingSelect(RingEvery):
    @always_eventually(fairness=("Pass(i=1)", "Pass(i=2)"))
    def BackToOneUnderTwo(self, s):
        return s.tok == 1


def test_a_property_selects_per_instance_conditions_by_their_labels():
    spec = _bind(RingSelect, {"N": 2})
    want = [("weak", frozenset(["Pass(1)"])), ("weak", frozenset(["Pass(2)"]))]
    assert _conds(spec, ("Pass(i=1)", "Pass(i=2)")) == want
    assert check_liveness(spec).liveness["properties"] == {"BackToOne": "holds",
                                                           "BackToOneUnderTwo": "holds"}
    # under N=3, Pass(3) is not selected: the token may stay at 3
    r = check_liveness(_bind(RingSelect, {"N": 3}))
    assert r.liveness["properties"] == {"BackToOne": "holds", "BackToOneUnderTwo": "violated"}
    check_lasso_generic(_bind(RingSelect, {"N": 3}), r.violation, conds=want)
    with pytest.raises(SpecDefinitionError, match=r"fairness names 'Pass\(i=2\)', which is "
                       r"not an action of the spec \(Pass\) nor an instance of one"):
        _bind(RingSelect, {"N": 1})


class FamilyAndLabel(Spec):
    """``Set`` strongly fair as a family and, by a computed table, instance by instance:
    with one process the two are one condition, which a property's ``fairness=`` may
    name either way (found by the random declarations above)."""

    N = Const(1, min=1)
    P = Ids(1, N)
    b = Array(P, Bool())

    @action(i=P, fair="strong-family")
    def Set(self, s, t, i):
        t.b[i] = True
        return ~s.b[i]

    @action(i=P)
    def Clear(self, s, t, i):
        t.b[i] = False
        return s.b[i]

    def fairness(self):
        return {f"Set(i={i})": "strong" for i in self.P}

    @always_eventually(fairness=("Set(i=1)",))
    def SetByLabel(self, s):
        return s.b[1]

    @always_eventually(fairness=("Set",))
    def SetByName(self, s):
        return s.b[1]

    @always_eventually(fairness=())
    def Unfair(self, s):
        return s.b[1]


def test_a_condition_declared_twice_is_selected_by_either_name() -> None:
    spec = FamilyAndLabel()
    want = [("strong", frozenset({"Set(1)"}))]
    assert _conds(spec) == want
    assert _conds(spec, ("Set(i=1)",)) == want
    assert _conds(spec, ("Set",)) == want
    r = check(spec)
    assert r.status == "violation" and r.violation is not None
    assert r.violation.property == "Unfair"
    assert check(spec, invariants=["SetByLabel", "SetByName"]).status == "ok"


# ------------------------------------- the table of patterns in docs/liveness.md
def pattern_rows() -> list[tuple[str, str]]:
    """The (declaration, TLA+) rows of the table of patterns (docs/liveness.md)."""
    lines = LIVENESS_PAGE.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("<!-- fairness-patterns"))
    rows = []
    for line in lines[i + 3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append((cells[0], cells[1]))
    return rows


def _pattern_spec(text: str, n: int) -> Spec:
    """The spec of a row: ``I`` sets ``z``, ``B(p)`` sets ``x[p]``, ``C(p, q)`` copies
    ``x[q]`` to ``x[p]`` and ``Y(p)`` moves ``y[p]``; ``sel(p)`` is ``y[p]``."""
    table = ast.literal_eval(re.search(r"`fairness = (\{.*?\})`", text).group(1))
    N = Const(2, min=1)  # noqa: N806
    P = Ids(1, N)  # noqa: N806

    def I(self, s, t):  # noqa: E743
        t.z = ~s.z
        return s.x[1]

    def B(self, s, t, p):
        t.x[p] = ~s.x[p]
        return ~s.z

    def C(self, s, t, p, q):
        t.x[p] = s.x[q]
        return s.x[p] != s.x[q]

    def Y(self, s, t, p):
        t.y[p] = where(s.y[p] < self.N, s.y[p] + 1, 1)
        return s.z & (self.N > 1)

    ns = {"check_deadlock": False, "N": N, "P": P, "x": Array(P, Bool()), "z": Bool(),
          "y": Array(P, Int(1, N)), "I": action(I), "B": action(p=P)(B),
          "C": action(p=P, q=P)(C), "Y": action(p=P)(Y), "fairness": table,
          "sel": lambda self, s, p: s.y[p]}
    return _bind(type("Row", (Spec,), ns), {"N": n})


def _tla_terms(text: str, env: dict[str, int], n: int) -> list[tuple[str, object]]:
    """The (instance label, guard on the state or None) pairs of a disjunction of
    ``I``, ``B(a)``, ``C(a, b)`` and ``\\E v \\in P: ...``, an argument being a number,
    a bound variable or ``y[a]`` (the instance whose argument is ``y[a]`` in the state)."""
    out: list[tuple[str, object]] = []
    rest = text
    while rest:
        m = re.match(r"\\E (\w+) \\in P: (.*)", rest)
        if m:  # its scope extends to the end
            for v in range(1, n + 1):
                out += _tla_terms(m.group(2), {**env, m.group(1): v}, n)
            return out
        term, _, rest = rest.partition(" \\/ ")
        name, _, args = term.partition("(")
        values: list[list[tuple[int, object]]] = [[]]
        for arg in [a.strip() for a in args.rstrip(")").split(",") if a.strip()]:
            y = re.fullmatch(r"y\[(\w+)\]", arg)
            if y:
                at = env[y.group(1)] if y.group(1) in env else int(y.group(1))
                values = [[*vs, (v, (at, v))] for vs in values for v in range(1, n + 1)]
            else:
                v = env[arg] if arg in env else int(arg)
                values = [[*vs, (v, None)] for vs in values]
        for vs in values:
            label = f"{name}({', '.join(str(v) for v, _ in vs)})" if vs else name
            picks = [g for _, g in vs if g is not None]
            out.append((label, tuple(picks) or None))
    return out


def _tla_conds(formula: str, n: int) -> Conditions:
    """A row's TLA+ formula as (kind, labels or :class:`Selected`) pairs over ``P = 1..n``."""
    m = re.fullmatch(r"\\A (\w+) \\in P: (.*)", formula)
    envs = [{m.group(1): v} for v in range(1, n + 1)] if m else [{}]
    body = m.group(2) if m else formula
    kind, inner = re.fullmatch(r"(WF|SF)_vars\((.*)\)", body).groups()
    out: Conditions = []
    for env in envs:
        terms = _tla_terms(inner, env, n)
        labels = frozenset(lab for lab, _ in terms)
        picks = {lab: g for lab, g in terms if g is not None}
        kind_ = "weak" if kind == "WF" else "strong"
        if not picks:
            out.append((kind_, labels))
            continue

        def pick(view, lab, picks=picks):
            return lab not in picks or all(int(view.y[at]) == v for at, v in picks[lab])

        out.append((kind_, Selected(labels, pick)))
    return out


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("declaration, formula", pattern_rows())
def test_docs_fairness_patterns(declaration, formula, n):
    assert len(pattern_rows()) >= 9
    if formula.startswith("refused"):
        with pytest.raises(SpecDefinitionError, match="must have the same parameters left "
                           r"free.*C\(q=sel\(p\)\) leaves p and I leaves none"):
            _pattern_spec(declaration, n)
        return
    spec = _pattern_spec(declaration, n)
    want = _tla_conds(formula.strip("`"), n)
    got = _checker_conds(spec)
    assert len(got) == len(want)
    assert _semantic(spec, got) == _semantic(spec, want)


# ------------------------------------------------- malformed patterns, selectors
class Picks(Spec):
    """``Set(i)`` sets ``b[i]``; ``aim`` (``1..N+1``, ``N+1`` outside ``P``) is what
    ``target()`` selects."""

    check_deadlock = False
    N = Const(2, min=1)
    P = Ids(1, N)
    b = Array(P, Bool())
    aim = Int(1, 3)

    @action(i=P)
    def Set(self, s, t, i):
        t.b[i] = ~s.b[i]
        return True

    @action
    def Aim(self, s, t):
        t.aim = where(s.aim < 3, s.aim + 1, 1)
        return True

    def target(self, s):
        return s.aim

    @always_eventually
    def FirstSet(self, s):
        return s.b[1]


@pytest.mark.parametrize("table, message", [
    ({"Set(j=*)": "weak"}, r"'j=\*' in 'Set\(j=\*\)' must be `parameter=value`"),
    ({"Set(i=7)": "weak"}, r"'Set\(i=7\)', which is no instance of Set"),
    ({"Set(i=nope())": "weak"}, r"nope\(...\), which is no method of the spec"),
    ({"Set(i=target(k))": "weak"}, r"the arguments of a selector are integers or "
                                    r"parameters of Set .* got 'k'"),
    ({"Set(i=target())": "weak-family"}, r"a selector \(i\) takes one instance per state"),
    ({"Aim | Set": "weak"}, r"must have the same parameters left free.*Aim leaves none "
                            r"and Set leaves i.*\"A \| B\(i=\*\)\" is WF_vars"),
    ({"Set[x](i=*)": "weak"}, r"action Set has no branch 'x'"),
])
def test_malformed_patterns_are_refused_with_the_reason(table, message):
    cls = type("Bad", (Picks,), {"fairness": table})
    with pytest.raises(SpecDefinitionError, match=message):
        cls()


def test_a_selector_outside_the_domain_stops_the_check_naming_the_state():
    from modelcheck.errors import SpecEvaluationError

    cls = type("Outside", (Picks,), {"fairness": {"Set(i=target())": "weak"}})
    with pytest.raises(SpecEvaluationError, match=r"spec Outside\(N=2\): fairness "
                       r"WF\(Set\(i=target\(\)\)\): in the state .*aim=3.* the selector "
                       r"target\(\) gives a value that no instance of the action has"):
        check_liveness(cls())
    # bound with N=3 every value is an instance: the selected Set is taken
    assert check_liveness(cls(N=3)).liveness["properties"] == {"FirstSet": "violated"}


def test_simulation_checks_a_selected_sub_action():
    from modelcheck.simulate import simulate

    cls = type("Sel", (Picks,), {"fairness": {"Set(i=target())": "weak", "Aim": "weak"}})
    r = simulate(cls(N=3), seed=1, runs=200, depth=30)
    assert r.status == "violation" and r.violation.kind == "liveness"
    check_lasso_generic(cls(N=3), r.violation)
