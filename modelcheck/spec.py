"""The spec contract: a declarative class of constants, variables, actions and properties.

A spec is a subclass of :class:`Spec`. Its class body declares constants
(:class:`~modelcheck.types.base.Const`), index sets (``Ids``), state variables (finite
types), and decorated methods:

* ``@action(b=Brokers)`` — ``def Name(self, s, t, b)``: a guarded transition,
  instantiated for every parameter value. It assigns next-state cells on ``t``
  and returns the guard (a boolean expression over ``s``).
* ``@invariant`` — ``def Name(self, s)``: must hold in every reachable state.
* ``@action_property`` — ``def Name(self, s, t)``: must hold on every transition.
* ``@constraint`` — ``def Name(self, s)``: states violating it are checked but
  not expanded (TLC's ``CONSTRAINT``).
* ``@action_constraint`` — ``def Name(self, s, t)``: a transition violating it is
  not taken (TLC's ``ACTION_CONSTRAINT``): its successor is checked but not stored
  or expanded, unless another transition reaches it.

Mistakes in the class (a wrong action signature, a name used twice) are rejected
when the class is defined. A spec class has the declarations of every class of its
MRO (``class C(A, B)``: A's and B's); a name declared in several is the one Python
resolves for ``C.name``, in the place of its first declaration (the most basic class
first, as dataclasses order fields). ``KRaftBroker(N=3)`` binds constants and returns a
ready spec with its state layout and action instances.

For example::

    class Counter(Spec):
        Max = Const(3)
        x = Int(0, Max)

        @action
        def Inc(self, s, t):
            t.x = s.x + 1
            return s.x < self.Max

        @invariant
        def Bounded(self, s):
            return s.x <= self.Max
"""

from __future__ import annotations

import ast
import enum
import functools
import inspect
import linecache
import os
import textwrap
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .codec import tla_text as param_text
from .errors import ConstantError, SpecDefinitionError, source_location
from .fairness import KINDS, FairnessCondition, resolve_fairness, select_fairness
from .itfvalues import freeze
from .layout import Layout
from .types import (
    BoundBag,
    BoundSet,
    Const,
    Deferred,
    Ids,
    Record,
    ScalarType,
    Type,
    Value,
    as_leaf,
    record_field_problem,
    refuse_sparse_sets,
    resolve,
)

__all__ = [
    "Spec",
    "RoleKind",
    "action",
    "invariant",
    "initially",
    "action_property",
    "constraint",
    "action_constraint",
    "ActionDecl",
    "PredicateDecl",
    "ActionInstance",
    "MemberOf",
    "param_text",
]


class ActionDecl:
    """An action as declared: the function, its parameter domains and its fairness
    (``None``, or a :data:`~modelcheck.fairness.KINDS` value, see
    :mod:`modelcheck.fairness`)."""

    def __init__(self, fn: Callable[..., Any], params: dict[str, Any],
                 fair: str | None | _Keep = None) -> None:
        self.fn = fn
        self.params = params
        #: whether ``fair=`` was given (else an override keeps the overridden action's)
        self.fair_given = not isinstance(fair, _Keep)
        self.fair: str | None = None if isinstance(fair, _Keep) else fair
        self.name = fn.__name__
        self.where = source_location(fn)
        sig = list(inspect.signature(fn).parameters)
        want = ["self", "s", "t", *params]
        if sig[:3] != want[:3] or sig[3:] != list(params):
            raise SpecDefinitionError(
                f"{self.where}: action {self.name} must be defined as "
                f"`def {self.name}({', '.join(want)})` (its parameters are the keyword "
                f"arguments of @action, in the same order), not `def {self.name}"
                f"({', '.join(sig)})`."
            )
        if self.fair is not None and self.fair not in KINDS:
            raise SpecDefinitionError(
                f"{self.where}: action {self.name}: fair={fair!r}; use one of "
                f"{', '.join(map(repr, KINDS))}."
            )
        #: names of the ``with t.branch(name, cond):`` blocks, in source order
        self.branches: tuple[str, ...] = _branch_names(fn, self.name)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


def _names_attribute(code: Any, name: str) -> bool:
    """Whether ``code`` (a code object) or a function nested in it names ``name``."""
    if not isinstance(code, types.CodeType):
        return True  # not a plain function: let the source tell
    return name in code.co_names or any(
        _names_attribute(c, name) for c in code.co_consts if isinstance(c, types.CodeType))


def _branch_names(fn: Callable[..., Any], action_name: str) -> tuple[str, ...]:
    """The branch names of an action, read from its source: the string literals of its
    ``with t.branch("name", cond):`` blocks (``t`` being its third argument)."""
    if not _names_attribute(getattr(fn, "__code__", None), "branch"):
        return ()  # no ``.branch`` anywhere in its code: no source to read
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return ()
    src = textwrap.dedent("".join(lines))
    if ".branch" not in src:
        return ()
    tree = ast.parse(src)
    func = next((n for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None or len(func.args.args) < 3:
        return ()
    tname = func.args.args[2].arg
    file = source_location(fn).rsplit(":", 1)[0]

    def is_branch(node: ast.AST) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "branch" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == tname)

    names: list[str] = []
    at: dict[str, tuple[int, int]] = {}
    in_with: set[int] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.With):
            for item in node.items:
                if not is_branch(item.context_expr):
                    continue
                call = item.context_expr
                assert isinstance(call, ast.Call)
                in_with.add(id(call))
                where = f"{file}:{first + call.lineno - 1}"
                if not call.args or not isinstance(call.args[0], ast.Constant) \
                        or not isinstance(call.args[0].value, str):
                    raise SpecDefinitionError(
                        f"{where}: action {action_name}: a branch is named by a string "
                        f"literal, `with {tname}.branch(\"name\", cond):`, so that its "
                        "branches are known when the spec is defined.")
                name = call.args[0].value
                if name in names:
                    raise SpecDefinitionError(
                        f"{where}: action {action_name} has two branches named {name!r}.")
                names.append(name)
                at[name] = (call.lineno, call.col_offset)
    for node in ast.walk(func):
        if is_branch(node) and id(node) not in in_with:
            raise SpecDefinitionError(
                f"{file}:{first + getattr(node, 'lineno', 1) - 1}: action {action_name}: "
                f"use a branch as a block, `with {tname}.branch(\"name\", cond):`.")
    return tuple(sorted(names, key=at.__getitem__))


class RoleKind(enum.StrEnum):
    """The role of a declared predicate. A :class:`~enum.StrEnum`: a member equals its
    value (``RoleKind.ACTION == "action"``), so a kind given as text still compares."""

    INVARIANT = "invariant"
    ACTION = "action"
    CONSTRAINT = "constraint"
    ACTION_CONSTRAINT = "action_constraint"
    TEMPORAL = "temporal"
    INITIAL = "initial"


class PredicateDecl:
    """An invariant, action property, state constraint, action constraint, temporal
    property or initial-state property: its ``kind`` is a
    :class:`~modelcheck.spec.RoleKind` (given by its value, ``"invariant"``, it becomes
    the member; an unknown one is a ``ValueError``)."""

    def __init__(self, fn: Callable[..., Any], kind: RoleKind | str, name: str | None = None,
                 doc: str | None = None) -> None:
        self.fn = fn
        kind = self.kind = RoleKind(kind)
        self.name = name or fn.__name__
        self.where = source_location(fn)
        self.doc = (doc or inspect.getdoc(fn) or "").split("\n\n")[0]
        # a temporal property is about states (self, s) or about steps (self, s, t)
        n_args = ({3} if kind in (RoleKind.ACTION, RoleKind.ACTION_CONSTRAINT)
                  else {2, 3} if kind is RoleKind.TEMPORAL else {2})
        sig = list(inspect.signature(fn).parameters)
        if len(sig) not in n_args:
            want = " or ".join("(self, s)" if n == 2 else "(self, s, t)" for n in sorted(n_args))
            raise SpecDefinitionError(
                f"{self.where}: {kind} {self.name} must take {want}, takes ({', '.join(sig)})."
            )

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


class _Keep:
    """The default of ``fair=``: no fairness, or, for an action that overrides an
    inherited one, the overridden action's (TLA+'s ``WF_vars(Next)`` names the action,
    and a variant that redefines ``Next`` keeps it); ``fair=None`` drops it."""

    def __repr__(self) -> str:
        return "<keep>"


KEEP = _Keep()


def action(fn: Callable[..., Any] | None = None, /, *, fair: str | None | _Keep = KEEP,
           **params: Any) -> Any:
    """Declare a guarded action; keyword arguments give parameter domains.

    ``@action`` or ``@action(b=Brokers, c=Ids(0, N))``. ``fair="weak"`` (or
    ``"strong"``) makes every instance weakly (strongly) fair, ``"weak-family"``
    (``"strong-family"``) the family as one action; see :mod:`modelcheck.fairness`.
    Without ``fair=``, an action that overrides an inherited one keeps its fairness;
    ``fair=None`` declares none.
    """
    if fn is not None:
        if not callable(fn):
            raise SpecDefinitionError("@action takes keyword parameter domains: @action(b=Brokers)")
        return ActionDecl(fn, {}, KEEP)
    return lambda f: ActionDecl(f, params, fair)


def invariant(fn: Callable[..., Any]) -> PredicateDecl:
    """Declare a state invariant ``def Name(self, s) -> bool``."""
    return PredicateDecl(fn, RoleKind.INVARIANT)


def initially(fn: Callable[..., Any]) -> PredicateDecl:
    """Declare a property of the initial states ``def Name(self, s) -> bool``: TLA+'s
    state predicate as a ``PROPERTY`` (a refinement's ``Init``-only check), which must
    hold in every initial state and says nothing of the others (see
    :mod:`modelcheck.initial`)."""
    return PredicateDecl(fn, RoleKind.INITIAL)


def action_property(fn: Callable[..., Any]) -> PredicateDecl:
    """Declare a property of every transition ``def Name(self, s, t) -> bool``."""
    return PredicateDecl(fn, RoleKind.ACTION)


def constraint(fn: Callable[..., Any]) -> PredicateDecl:
    """Declare a state constraint: states where it is false are not expanded."""
    return PredicateDecl(fn, RoleKind.CONSTRAINT)


def action_constraint(fn: Callable[..., Any]) -> PredicateDecl:
    """Declare an action constraint ``def Name(self, s, t) -> bool`` (TLC's
    ``ACTION_CONSTRAINT``): a transition where it is false is not taken. Its successor
    is checked against the invariants (and the transition against the action
    properties) but not stored or expanded, unless another transition reaches it; the
    transition still counts as enabled (a state whose transitions are all excluded is
    not a deadlock)."""
    return PredicateDecl(fn, RoleKind.ACTION_CONSTRAINT)


@dataclass(frozen=True)
class ActionInstance:
    """One action with concrete parameters; ``id`` is its position in the spec.

    ``params`` holds each parameter's value as traces show it (an int for an index, a
    frozen record or set for a parameter of a compound type); ``args`` the expression
    values the action is called with when they differ from those (a record value, a
    set value); ``members`` the ``(variable, parameter position)`` pairs of
    :class:`MemberOf` parameters: the instance is enabled only where that parameter
    is a member of that state variable (TLA+'s ``\\E m \\in msgs: A(m)``), and its body
    runs only on states where it is (on a batch: only when some state has it).
    """

    id: int
    decl: ActionDecl
    params: tuple[tuple[str, Any], ...]
    #: the branch (``with t.branch(name, ...)``) this instance takes, if the action has any
    branch: str | None = None
    args: tuple[Any, ...] | None = field(default=None, compare=False, repr=False)
    members: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def name(self) -> str:
        """The action's name, with its branch: ``Decide`` or ``Decide[commit]``."""
        if self.branch is None:
            return self.decl.name
        return f"{self.decl.name}[{self.branch}]"

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(param_text(v) for _, v in self.params)})"

    @property
    def arguments(self) -> tuple[Any, ...]:
        """The values the action function is called with, after ``self, s, t``."""
        if self.args is not None:
            return self.args
        return tuple(v for _, v in self.params)

    def member_mask(self, s: Any) -> Any:
        """Where the :class:`MemberOf` parameters are members of their variables in
        state (or batch) ``s``; None when the action has none."""
        if not self.members:
            return None
        args = self.arguments
        acc: Any = np.True_
        for var, k in self.members:
            acc = acc & getattr(s, var).has(args[k])
        return acc

    def call(self, spec: Spec, s: Any, t: Any) -> Any:
        return self.decl.fn(spec, s, t, *self.arguments)


class MemberOf:
    """An action parameter that ranges over the members of a set- (or bag-) valued
    state variable: ``@action(m=MemberOf("msgs"))`` is TLA+'s
    ``\\E m \\in msgs: Receive(m)``.

    The action has one instance per value of the variable's element type, enabled
    only in states where that value is a member; its body runs only where it is, and
    on a batch of states an instance whose value is a member of none is skipped
    without calling the action. Traces and coverage show the value
    (``Receive(m=[type |-> "ack", rm |-> 2])``).

    ``keep``, a test of the element value alone, is TLA+'s ``\\E m \\in {m \\in msgs:
    m.type = "Prepare"}``: ``MemberOf("msgs", lambda m: m.type == MsgType.Prepare)``.
    The action then has one instance per element value that passes it (the test runs
    once, when the spec is bound, on each value of the element type), so a receive
    action of one kind of message in a set of many kinds is called for the members of
    its kind only. Its parameters after the first name ``self`` (the bound spec) or
    parameters declared before this one (``lambda m, r: m.dst == r``). It must give a
    boolean for every value: a constant, never a state's.
    """

    def __init__(self, var: str, keep: Callable[..., Any] | None = None) -> None:
        if not isinstance(var, str):
            raise SpecDefinitionError(
                f"MemberOf(...) takes the name of a SetOf or Bag state variable, got {var!r}.")
        if keep is not None and not callable(keep):
            raise SpecDefinitionError(
                f"MemberOf({var!r}, keep): keep is a test of the element value "
                f"(lambda m: ...), got {keep!r}.")
        self.var = var
        self.keep = keep

    def __repr__(self) -> str:
        return f"MemberOf({self.var!r})" if self.keep is None else \
            f"MemberOf({self.var!r}, keep={getattr(self.keep, '__name__', '?')})"

    def test(self, spec: Any, where: str, earlier: Mapping[str, Any]
             ) -> Callable[[Any], bool] | None:
        """``keep`` as a test of an element value (the parameters after its first
        bound), None without one."""
        keep = self.keep
        if keep is None:
            return None
        names = list(inspect.signature(keep).parameters)[1:]
        unknown = [w for w in names if w != "self" and w not in earlier]
        if unknown:
            raise SpecDefinitionError(
                f"{where}: MemberOf({self.var!r}, keep) takes "
                f"({', '.join(['<element>', *names])}), but {', '.join(unknown)} "
                f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} "
                "declared before it.")
        kw = {w: spec if w == "self" else earlier[w] for w in names}

        def test(x: Any) -> bool:
            ok = keep(x, **kw)
            if not isinstance(ok, (bool, np.bool_)):
                raise SpecDefinitionError(
                    f"{where}: MemberOf({self.var!r}, keep) gave {ok!r} for an element; "
                    "keep must give a boolean of the element value alone (a constant), "
                    "never of a state: test state values in the action's guard.")
            return bool(ok)

        return test


@dataclass(frozen=True)
class _Choice:
    """One value of a parameter: as traces show it, as the action receives it, and the
    variable it must be a member of (:class:`MemberOf`)."""

    value: Any
    arg: Any
    member: str | None = None


#: the most values a parameter of a compound type may range over
MAX_PARAM_VALUES = 1 << 16


class _Namespace(dict):  # type: ignore[type-arg]
    """Class-body namespace that rejects a declaration defined twice in one class body."""

    def __setitem__(self, key: str, value: Any) -> None:
        old = self.get(key)
        if old is not None and _is_decl(old) and _is_decl(value):
            where = getattr(value, "where", None) or getattr(old, "where", "<spec>")
            raise SpecDefinitionError(
                f"{where}: {key} is declared twice in the same spec class (first as a "
                f"{_decl_kind(old)}, then as a {_decl_kind(value)}); the second would "
                "silently replace the first."
            )
        super().__setitem__(key, value)


def _is_decl(v: Any) -> bool:
    return isinstance(v, (Const, Type, Ids, ActionDecl, PredicateDecl))


def _decl_kind(v: Any) -> str:
    if isinstance(v, Const):
        return "constant"
    if isinstance(v, Type):
        return "variable"
    if isinstance(v, Ids):
        return "index set"
    if isinstance(v, ActionDecl):
        return "action"
    return getattr(v, "kind", "property")


class _SpecMeta(type):
    @classmethod
    def __prepare__(  # type: ignore[override]
            mcs, name: str, bases: tuple[type, ...], /, **kw: Any) -> dict[str, Any]:
        return _Namespace()

    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, Any],
                **kw: Any) -> type:
        return super().__new__(mcs, name, bases, dict(ns), **kw)


class Spec(metaclass=_SpecMeta):
    """Base class of specs. Subclass it; instantiate with constant overrides to bind."""

    #: check for states without successors (TLC's deadlock check)
    check_deadlock: ClassVar[bool] = True
    #: names of Ids sets whose members are interchangeable (symmetry reduction)
    symmetry: ClassVar[tuple[str, ...]] = ()
    #: TLA+'s ``VIEW``: the names of the state variables that make a state distinct.
    #: Two states that agree on them are one state: the first reached is kept and
    #: expanded, the others dropped (``None``: every variable counts). See
    #: ``docs/view.md``.
    view: ClassVar[tuple[str, ...] | None] = None
    #: fairness by action name, instance label or group (``{"Tick": "weak"}``), added to
    #: (conjoined with) the ``fair=`` of ``@action``; resolved when the spec is bound, and
    #: may be a method of the bound spec returning the table (see
    #: :mod:`modelcheck.fairness`)
    fairness: ClassVar[Mapping[str, str] | Callable[[Any], Mapping[str, str]]] = {}

    _consts: ClassVar[dict[str, Const]] = {}
    _vars: ClassVar[dict[str, Type]] = {}
    _actions: ClassVar[dict[str, ActionDecl]] = {}
    #: per action, its ``fair=`` (an override without ``fair=`` keeps the overridden one's)
    _action_fair: ClassVar[dict[str, str | None]] = {}
    _predicates: ClassVar[dict[str, PredicateDecl]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        where = f"{source_location_of_class(cls)}"
        tables: dict[str, dict[str, Any]] = {"constant": {}, "variable": {}, "action": {},
                                             "property": {}}
        #: per declared name, the class whose declaration is the one in the tables
        owner: dict[str, type] = {}
        fair: dict[str, str | None] = {}
        # Every class of the MRO contributes its own declarations, from the most basic
        # to ``cls``: a name declared again later (nearer ``cls`` in the MRO) replaces
        # the earlier declaration in place, so each name ends up declared as Python
        # resolves ``cls.name``, in the order of first declaration (as dataclasses
        # collect fields).
        for klass in reversed(cls.__mro__):
            if klass is object or klass is Spec:
                continue
            own = klass is cls or not issubclass(klass, Spec)  # not validated before
            here = where if klass is cls else None
            for name, value in klass.__dict__.items():
                if name.startswith("__"):
                    continue
                kind = _table_of(value)
                if kind is None:
                    if name in tables["action"] or name in tables["property"]:
                        raise SpecDefinitionError(
                            f"{here or source_location_of_class(klass)}: "
                            f"{_qualified(cls, klass, name)} overrides an inherited action or "
                            "property with a plain attribute; decorate it with @action, "
                            "@invariant, @action_property, @constraint or @action_constraint."
                        )
                    continue
                clash = next((k for k, t in tables.items() if k != kind and name in t), None)
                if clash is not None:
                    raise SpecDefinitionError(_clash_message(cls, klass, owner[name], name,
                                                             kind, clash, here))
                if kind == "variable" and own:
                    here = here or source_location_of_class(klass)
                    _check_variable(cls, name, value, here)
                    value.decl_line = here
                if kind == "action":
                    keep = not value.fair_given and name in tables["action"]
                    fair[name] = fair[name] if keep else value.fair
                tables[kind][name] = value
                owner[name] = klass
        if isinstance(cls.__dict__.get("symmetry"), str):
            raise SpecDefinitionError(
                f"{where}: {cls.__name__}.symmetry must be a tuple of Ids names, e.g. "
                f"symmetry = ({cls.__dict__['symmetry']!r},)"
            )
        for sym in cls.symmetry:
            if not isinstance(getattr(cls, sym, None), Ids):
                raise SpecDefinitionError(
                    f"{where}: {cls.__name__}.symmetry names {sym!r}, which is not an Ids(...) "
                    "set of the spec."
                )
        _check_view(cls, where, tables["variable"])
        cls._consts = tables["constant"]
        cls._vars = tables["variable"]
        cls._actions = tables["action"]
        cls._action_fair = fair
        cls._predicates = tables["property"]

    # -- binding ----------------------------------------------------------
    def __init__(self, **overrides: Any) -> None:
        cls = type(self)
        unknown = [k for k in overrides if k not in cls._consts]
        if unknown:
            known = ", ".join(f"{n}={c.default}" for n, c in cls._consts.items()) or "none"
            raise ConstantError(
                f"unknown constant {', '.join(map(repr, unknown))} for spec {cls.__name__}; "
                f"its constants (with defaults) are: {known}."
            )
        consts: dict[str, Any] = {}
        for name, c in cls._consts.items():
            value = overrides.get(name, c.default)
            consts[name] = _check_const(cls.__name__, name, c, value)
        self.constants: Mapping[str, Any] = consts
        if not cls._vars:
            raise SpecDefinitionError(f"spec {cls.__name__} declares no state variables.")
        bound = []
        for name, typ in cls._vars.items():
            try:
                bound.append((name, typ.bound(consts), typ.decl_line))
            except SpecDefinitionError as e:
                raise SpecDefinitionError(f"{typ.decl_line}: variable {name}: {e}") from None
        # with a view, a fingerprint is the view's, not the state's: the states are
        # always stored as words (at least two, so never "the fingerprint is the state")
        self.layout = Layout(bound, min_words=1 if cls.view is None else 2)
        self.actions: tuple[ActionInstance, ...] = tuple(self._instances())
        if not self.actions:
            raise SpecDefinitionError(f"spec {cls.__name__} declares no actions.")
        self.invariants = tuple(p for p in cls._predicates.values()
                                if p.kind is RoleKind.INVARIANT)
        self.properties = tuple(p for p in cls._predicates.values() if p.kind is RoleKind.ACTION)
        self.constraints = tuple(p for p in cls._predicates.values()
                                 if p.kind is RoleKind.CONSTRAINT)
        self.action_constraints = tuple(p for p in cls._predicates.values()
                                        if p.kind is RoleKind.ACTION_CONSTRAINT)
        #: temporal properties (:mod:`modelcheck.temporal`), checked by the liveness checker
        self.temporal = tuple(p for p in cls._predicates.values() if p.kind is RoleKind.TEMPORAL)
        #: properties of the initial states (``@initially``, :mod:`modelcheck.initial`)
        self.initial_properties = tuple(p for p in cls._predicates.values()
                                        if p.kind is RoleKind.INITIAL)
        #: every fairness condition (``fair=`` and the ``fairness`` table, conjoined),
        #: resolved against the instances of these constants (:mod:`modelcheck.fairness`)
        self.fairness_conditions: tuple[FairnessCondition, ...] = resolve_fairness(self)
        for p in self.temporal:
            select_fairness(self, self.fairness_conditions, getattr(p, "fairness", None))

    def symmetry_sets(self) -> dict[str, range]:
        """The declared symmetric id sets with their bound members."""
        return {name: getattr(type(self), name).bind(self.constants) for name in self.symmetry}

    def _instances(self) -> Iterator[ActionInstance]:
        n = 0
        for decl in type(self)._actions.values():
            for combo in self._param_combos(decl, list(decl.params.items()), ()):
                params = tuple((k, c.value) for k, c in combo)
                plain = all(c.arg is c.value for _, c in combo)
                args = None if plain else tuple(c.arg for _, c in combo)
                members = tuple((c.member, j) for j, (_, c) in enumerate(combo)
                                if c.member is not None)
                for branch in decl.branches or (None,):
                    yield ActionInstance(n, decl, params, branch, args, members)
                    n += 1

    def _param_combos(self, decl: ActionDecl, rest: list[tuple[str, Any]],
                      bound: tuple[tuple[str, _Choice], ...]
                      ) -> Iterator[tuple[tuple[str, _Choice], ...]]:
        """Parameter tuples in order; a callable domain may depend on earlier parameters
        (``q=lambda self, p: excluding(self.Procs, p)``)."""
        if not rest:
            yield bound
            return
        (pname, dom), tail = rest[0], rest[1:]
        earlier = {k: c.arg for k, c in bound}
        for v in self._domain_values(dom, decl, pname, earlier):
            yield from self._param_combos(decl, tail, (*bound, (pname, v)))

    def _typed_values(self, btype: Any, decl: ActionDecl, pname: str,
                      member: str | None, keep: Callable[[Any], bool] | None = None
                      ) -> list[_Choice]:
        """The values of a bound type as parameter choices: ints for a one-cell type
        (an index, an int, an enum), frozen values and expression values otherwise;
        with ``keep``, those whose expression value passes it."""
        refuse_sparse_sets(btype, f"{decl.where}: parameter {pname} of action {decl.name}")
        if btype.n_values > MAX_PARAM_VALUES:
            raise SpecDefinitionError(
                f"{decl.where}: parameter {pname} of action {decl.name} ranges over "
                f"{btype.describe()}, which has {btype.n_values:,} values; at most "
                f"{MAX_PARAM_VALUES:,} are supported (one action instance each).")
        out = []
        for i in range(btype.n_values):
            arg = btype.value_at(i)
            if keep is not None and not keep(arg):
                continue
            if isinstance(btype, ScalarType) and not btype.boolean \
                    and not isinstance(arg, Value):
                out.append(_Choice(int(arg), int(arg), member))
                continue
            codes = [int(c) for c in btype.columns(arg)]
            out.append(_Choice(freeze(btype.value(codes, itf=True)), arg, member))
        return out

    def _domain_values(self, dom: Any, decl: ActionDecl, pname: str,
                       earlier: dict[str, Any]) -> list[_Choice]:
        if isinstance(dom, Ids):
            return [_Choice(v, v) for v in dom.bind(self.constants)]
        if isinstance(dom, MemberOf):
            info = self.layout.vars.get(dom.var)
            btype = getattr(info, "btype", None)
            if not isinstance(btype, (BoundSet, BoundBag)):
                what = ("is no state variable" if info is None else
                        f"is a variable of type {btype.describe() if btype else '?'}")
                raise SpecDefinitionError(
                    f"{decl.where}: parameter {pname} of action {decl.name} ranges over "
                    f"MemberOf({dom.var!r}), but {dom.var} {what}; MemberOf takes a SetOf "
                    "or Bag state variable (not an array of them).")
            keep = dom.test(self, f"{decl.where}: parameter {pname} of action {decl.name}",
                            earlier)
            return self._typed_values(btype.elem, decl, pname, dom.var, keep)
        if isinstance(dom, Type):
            return self._typed_values(as_leaf(dom.bound(self.constants)), decl, pname, None)
        value = resolve(dom, self.constants)
        if isinstance(value, type) and issubclass(value, enum.Enum):
            if not issubclass(value, int):
                raise SpecDefinitionError(
                    f"{decl.where}: parameter {pname} of action {decl.name} ranges over "
                    f"enum {value.__name__}, whose members are not ints: make it an "
                    "enum.IntEnum (values 0..k-1, as Enum(...) variables take).")
            return [_Choice(int(m), int(m)) for m in value]
        if callable(value) and not isinstance(value, Deferred):
            wants = list(inspect.signature(value).parameters)[1:]
            unknown = [w for w in wants if w not in earlier]
            if unknown:
                raise SpecDefinitionError(
                    f"{decl.where}: the domain of parameter {pname} of action {decl.name} "
                    f"takes ({', '.join(['self', *wants])}), but {', '.join(unknown)} "
                    f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} "
                    f"declared before {pname} (parameters: {', '.join(decl.params)})."
                )
            value = value(self, **{w: earlier[w] for w in wants})
        try:
            values = [int(v) for v in value]
        except (TypeError, ValueError):
            raise SpecDefinitionError(
                f"{decl.where}: parameter {pname} of action {decl.name} must range over "
                f"Ids(...), a range, an IntEnum, an iterable of ints, a type (SetOf(...), "
                f"Record(...)) or MemberOf(\"<variable>\"), got {dom!r}."
            ) from None
        return [_Choice(v, v) for v in values]

    # -- overridable ------------------------------------------------------
    def init_states(self) -> Iterable[Mapping[str, Any]]:
        """Initial states as ``{var: value}`` overrides of the declared initial values.

        The default is the single state of declared initial values. Override to
        give several (e.g. ``for v in range(3): yield {"x": v}``).
        """
        yield {}

    # -- helpers for tools ------------------------------------------------
    @property
    def name(self) -> str:
        return type(self).__name__

    def initial_values(self, init: Iterable[Mapping[str, Any]] | None = None
                       ) -> list[dict[str, Any]]:
        """Full initial states as ``{var: value}``; declared values merged with overrides
        (``init``: what ``init_states`` returned, if already called). An
        ``init_product(...).such_that(...)`` gives its combinations before the filter,
        which the kernel evaluates (``Kernel.initial_states``)."""
        base = {name: info.btype.default() for name, info in self.layout.vars.items()}
        out = []
        for over in self.init_states() if init is None else init:
            unknown = [k for k in over if k not in base]
            if unknown:
                raise SpecDefinitionError(
                    f"{source_location(type(self).init_states)}: init_states gives unknown "
                    f"variable(s) {', '.join(unknown)}."
                )
            state = dict(base)
            for k, v in over.items():
                if isinstance(v, Mapping) and isinstance(state[k], dict):
                    merged = dict(state[k])
                    merged.update(v)
                    state[k] = merged
                else:
                    state[k] = v
            out.append(state)
        return out

    def action_by_label(self, name: str, params: Mapping[str, Any] | None) -> ActionInstance | None:
        """The action instance with this name and parameters, if any."""
        want = {k: freeze(v) for k, v in (params or {}).items()}
        for a in self.actions:
            if a.name == name and dict(a.params) == want:
                return a
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_const_text(v)}" for k, v in self.constants.items())
        return f"{type(self).__name__}({args})"


def _enum_const(spec: str, name: str, cls: type[enum.Enum], value: Any) -> Any:
    """An enum-valued constant: a member, its name or its integer value."""
    if isinstance(value, cls):
        return value
    if isinstance(value, str) and value in cls.__members__:
        return cls.__members__[value]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return cls(value)
        except ValueError:
            pass
    raise ConstantError(
        f"constant {name} of spec {spec} is one of {', '.join(cls.__members__)} "
        f"({cls.__name__}); got {value!r}."
    )


def _const_text(v: Any) -> str:
    return v.name if isinstance(v, enum.Enum) else str(v)


def source_location_of_class(cls: type) -> str:
    """``file:line`` of the ``class`` statement (or of its first decorator), as
    :func:`inspect.getsourcelines` finds it; the module is parsed once for all its
    classes (inspect parses it again for each class: ~20 ms a class)."""
    try:
        file = inspect.getsourcefile(cls) or "<unknown>"
        line = _class_lines(file, *_stamp(file)).get(cls.__qualname__)
        if line is None:
            _, line = inspect.getsourcelines(cls)
    except (OSError, TypeError, SyntaxError, ValueError):
        return f"<{cls.__module__}>"
    from .errors import _short

    return f"{_short(file)}:{line}"


def _stamp(file: str) -> tuple[int, int]:
    """What tells two versions of a source file apart: ``(mtime_ns, size)``."""
    try:
        st = os.stat(file)
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=128)
def _class_lines(file: str, mtime_ns: int, size: int) -> dict[str, int]:
    """Per qualified class name in ``file``, the line of its first definition (its first
    decorator's line, if any): what :func:`inspect.getsourcelines` reports for a class
    (it walks the module's syntax tree the same way, once per class)."""
    lines = linecache.getlines(file)
    if not lines:
        return {}
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                qualname = prefix + child.name
                first = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                out.setdefault(qualname, first)
                visit(child, qualname + ".")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, prefix + child.name + ".<locals>.")
            else:
                visit(child, prefix)

    visit(ast.parse("".join(lines)), "")
    return out


def _table_of(value: Any) -> str | None:
    """Which table of a spec class a declaration goes to (None: not a declaration)."""
    if isinstance(value, Const):
        return "constant"
    if isinstance(value, Type):
        return "variable"
    if isinstance(value, ActionDecl):
        return "action"
    if isinstance(value, PredicateDecl):
        return "property"
    return None


def _qualified(cls: type, klass: type, name: str) -> str:
    """``C.name``, or ``C.name (from base B)`` when base ``B`` of ``C`` declares it."""
    if klass is cls:
        return f"{cls.__name__}.{name}"
    return f"{cls.__name__}.{name} (from base {klass.__name__})"


def _clash_message(cls: type, klass: type, first: type, name: str, kind: str, clash: str,
                   here: str | None) -> str:
    """A name declared as two kinds of thing along the MRO of ``cls``."""
    where = here or source_location_of_class(klass)
    if klass is cls or first in klass.__mro__:
        return (f"{where}: {_qualified(cls, klass, name)} is declared as a {kind} but is "
                f"already a {clash}; names must be unique across constants, variables, "
                "actions and properties.")
    return (f"{where}: spec {cls.__name__} inherits {name} from base {klass.__name__} as a "
            f"{kind} and from base {first.__name__} as a {clash}; names must be unique across "
            "constants, variables, actions and properties: rename one of them.")


def _check_view(cls: type[Spec], where: str, variables: Mapping[str, Type]) -> None:
    """Refuse a ``view`` that is not a tuple of distinct state variable names."""
    view = cls.__dict__.get("view", getattr(cls, "view", None))
    if view is None:
        return
    if isinstance(view, str) or not isinstance(view, (tuple, list)) \
            or not all(isinstance(v, str) for v in view):
        raise SpecDefinitionError(
            f"{where}: {cls.__name__}.view must be a tuple of state variable names (the "
            f"variables that make a state distinct, TLA+'s VIEW), e.g. view = ('x', 'y'); "
            f"got {view!r}.")
    unknown = [v for v in view if v not in variables]
    if unknown:
        which = "which is not a state variable" if len(unknown) == 1 else \
            "which are not state variables"
        raise SpecDefinitionError(
            f"{where}: {cls.__name__}.view names {', '.join(map(repr, unknown))}, {which} "
            f"of the spec (its variables: {', '.join(variables)}).")
    if len(set(view)) != len(view) or not view:
        raise SpecDefinitionError(
            f"{where}: {cls.__name__}.view must name each kept variable once, and at least "
            f"one; got {tuple(view)!r}.")
    if cls.symmetry:
        raise SpecDefinitionError(
            f"{where}: spec {cls.__name__} declares both symmetry {tuple(cls.symmetry)!r} and "
            "a view; modelcheck applies one reduction or the other, not both (TLC's "
            "SYMMETRY with VIEW permutes the view, which is not implemented): drop one.")
    if isinstance(view, list):
        cls.view = tuple(view)  # type: ignore[misc]


def _check_variable(cls: type, name: str, value: Type, where: str) -> None:
    if name.startswith("_"):
        raise SpecDefinitionError(
            f"{where}: variable {cls.__name__}.{name}: state variable names may "
            "not start with an underscore."
        )
    if name == "branch":
        raise SpecDefinitionError(
            f"{where}: variable {cls.__name__}.branch: `branch` is reserved "
            "(`with t.branch(...)` declares a branch of an action); rename it."
        )
    _check_record_fields(cls, name, value, where)


def _check_record_fields(cls: type, name: str, typ: Type, where: str) -> None:
    """Refuse a record field of variable ``name`` that is no TLA+ field name or starts
    with an underscore (the record value's own namespace, see
    :func:`~modelcheck.types.records.record_field_problem`)."""
    todo = [typ]
    while todo:
        t = todo.pop()
        if isinstance(t, Record):
            for field in t.fields:
                problem = record_field_problem(field)
                if problem is not None:
                    raise SpecDefinitionError(
                        f"{where}: spec {cls.__name__}, variable {name}: the record "
                        f"{t.describe()} has a field {field!r}, which {problem}; rename "
                        "the field."
                    )
        todo.extend(t.parts())


def _check_const(spec: str, name: str, c: Const, value: Any) -> Any:
    if isinstance(c.default, enum.Enum):
        return _enum_const(spec, name, type(c.default), value)
    if c.kind is bool:
        if not isinstance(value, bool):
            raise ConstantError(
                f"constant {name} of spec {spec} is a boolean; got {value!r}."
            )
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConstantError(
            f"constant {name} of spec {spec} is an integer; got {value!r}."
        )
    if c.min is not None and value < c.min:
        raise ConstantError(f"constant {name} of spec {spec} must be >= {c.min}; got {value}.")
    if c.max is not None and value > c.max:
        raise ConstantError(f"constant {name} of spec {spec} must be <= {c.max}; got {value}.")
    return value
