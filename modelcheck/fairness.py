"""Fairness of a bound spec: the ``fair=`` of ``@action`` and the class's ``fairness``
table, resolved against the action instances of the bound constants.

Every declaration adds conditions; TLA+ conjoins them (``Spec == Init /\\ [][Next]_vars
/\\ F1 /\\ F2 ...``), so an action that is ``fair="weak"`` and also named in the table
(``"weak-family"``, a label, a group) is checked under all of them, and a condition
declared twice is listed once. The forms (``p`` an action's parameters):

* ``fair="weak"`` / ``{"A": "weak"}``: ``\\A p: WF_vars(A(p))``, one condition per
  instance (an action's branches are disjuncts of one instance); ``"strong"``: ``SF``.
* ``fair="weak-family"`` / ``{"A": "weak-family"}``: ``WF_vars(\\E p: A(p))``, one
  condition of all the instances (``A(*)``).
* ``{"A(p=1)": "weak"}`` (an instance label, or a branch's ``A[b](p=1)``):
  ``WF_vars(A(1))``, that instance alone.
* ``{"A | B": "weak"}``: ``\\A p: WF_vars(A(p) \\/ B(p))``, one condition per binding of
  the (shared) parameters; with ``"-family"`` one condition of all their instances.
* A pattern ``{"C(p=1, q=*)": ...}``: a parameter given a value is fixed, ``*`` is taken
  inside (``\\E q``), one not named is free (``\\A``, a condition per value): ``{"C(q=*)":
  "weak"}`` is ``\\A p: WF_vars(\\E q: C(p, q))``. A group's parts may be patterns and
  must leave the same parameters free: ``{"I | B(i=*)": "weak"}`` is ``WF_vars(I \\/ \\E
  i: B(i))``.
* A selector ``{"Return(S=held(c))": "weak"}`` (``held`` a method of the spec, ``(self,
  s, c)``): ``\\A c: WF_vars(Return(c, held(c)))``, the instance chosen by the state
  where the step starts (:class:`Guard`: one state predicate per value, evaluated as
  an invariant is, on every state).

The table is resolved when the spec is **bound** (:class:`~modelcheck.spec.Spec`
``(**constants)``, which ``--const`` goes through), never when the class is defined:
a label or group naming no instance under the bound constants is an error naming it.
``fairness`` may also be a method of the bound spec returning the table (``def
fairness(self): return {f"A(p={p})": "weak" for p in self.P if p > 1}``), for
entries that depend on the constants. A table of instance labels that names every
instance of an action under the class's default constants but not under the bound ones
(``{"Pass(i=1)": ..., "Pass(i=2)": ...}`` bound with ``N=3``) is refused: it would
silently leave the new instances unfair; name the action (``{"Pass": "weak"}``) or
write the table as such a method.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .codec import tla_text
from .errors import ModelcheckError, SpecDefinitionError, source_location

if TYPE_CHECKING:
    from .spec import ActionInstance, PredicateDecl, Spec

__all__ = ["FairnessCondition", "Fairness", "Guard", "label_of", "resolve_fairness",
           "select_fairness", "KINDS"]

#: the fairness kinds of ``fair=`` and of the table's values
KINDS = ("weak", "strong", "weak-family", "strong-family")


class Fairness(enum.StrEnum):
    """The kind of a :class:`FairnessCondition`: ``WF`` or ``SF`` (a
    :class:`~enum.StrEnum`: equal to its value)."""

    WEAK = "weak"
    STRONG = "strong"


@dataclass(frozen=True)
class Guard:
    """A state predicate of a selector (``held(c) = {1, 2}``): the instance whose
    selected parameter has that value is the condition's action at the states where it
    holds. ``decl`` evaluates it (on a batch or one state), as an invariant is."""

    name: str
    #: the selector applied to its arguments, as the condition's label shows it
    call: str
    decl: PredicateDecl = dataclasses.field(compare=False, repr=False)


@dataclass(frozen=True)
class FairnessCondition:
    """``WF``/``SF`` of a set of action instances taken as one action."""

    kind: Fairness
    #: the action as TLA+ writes it: ``Tick``, ``Register(b=1)``, ``Register(*)`` (family)
    label: str
    #: the action family's name (what ``fairness=(...)`` of a property selects), or the
    #: group's key (``"A | B"``)
    family: str
    action_ids: tuple[int, ...]
    #: the labels of other declarations of the same condition (``fair="strong-family"``
    #: of ``Set`` and ``fairness={"Set(i=1)": "strong"}`` with one instance): kept once,
    #: it is selected by any of their names
    aliases: tuple[str, ...] = ()
    #: per action id selected by the state (a selector, ``Return(S=held(c))``): the names
    #: of the guards (state predicates) that must hold at the step's source for a step
    #: of it to count, and for it to count as enabled there; the other ids always count
    guards: tuple[tuple[int, tuple[str, ...]], ...] = ()
    #: the guards named in ``guards``
    predicates: tuple[Guard, ...] = dataclasses.field(default=(), compare=False)
    #: the action ids among which the state selects one value of the selected parameters
    #: (one group per binding of the other parameters): some instance of each group is
    #: selected at every state (the checker verifies it on the state graph)
    selections: tuple[tuple[int, ...], ...] = dataclasses.field(default=(), compare=False)

    def __post_init__(self) -> None:
        # a kind given by its value ("weak") becomes the member; an unknown one fails
        object.__setattr__(self, "kind", Fairness(self.kind))

    @property
    def name(self) -> str:
        return f"{'WF' if self.kind is Fairness.WEAK else 'SF'}({self.label})"


def label_of(inst: ActionInstance, branch: bool = True) -> str:
    """``Register(b=1)``, as traces label a step (``Decide[commit](b=1)`` for a branch of
    an action; with ``branch=False`` the action whose disjunct it is, ``Decide(b=1)``)."""
    name = inst.name if branch else inst.decl.name
    if not inst.params:
        return name
    return f"{name}({', '.join(f'{k}={tla_text(v)}' for k, v in inst.params)})"


def _by_label(actions: Sequence[ActionInstance]) -> dict[str, list[ActionInstance]]:
    """The instances each label names: ``A(p=1)`` all the branches of that instance,
    ``A[b](p=1)`` one branch."""
    out: dict[str, list[ActionInstance]] = {}
    for a in actions:
        out.setdefault(label_of(a, branch=False), []).append(a)
        if a.branch is not None:
            out.setdefault(label_of(a), []).append(a)
    return out


def _table(spec: Spec) -> tuple[Mapping[str, str], bool]:
    """The class's fairness table and whether it came from a method of the bound spec."""
    raw: Any = type(spec).fairness
    computed = callable(raw)
    table = raw
    if computed:
        try:
            table = raw(spec)
        except ModelcheckError:
            raise
        except Exception as e:  # noqa: BLE001 - the spec's own code: an error naming it
            raise SpecDefinitionError(
                f"{source_location(raw)}: spec {spec!r}: its fairness method failed with "
                f"{type(e).__name__}: {e}"
            ) from e
    if not isinstance(table, Mapping) or not all(isinstance(k, str) for k in table):
        raise SpecDefinitionError(
            f"spec {spec!r}: fairness must be a mapping of action names or instance labels "
            f"to 'weak', 'strong', 'weak-family' or 'strong-family' (or a method of the "
            f"bound spec returning one), got {type(table).__name__}."
        )
    return table, computed


def resolve_fairness(spec: Spec) -> tuple[FairnessCondition, ...]:
    """Every fairness condition of the bound ``spec`` (``fair=`` of each action, then the
    table's entries, conjoined; one condition declared twice is kept once), ordered by
    their action instances. Raises :class:`SpecDefinitionError` for an entry that names
    no action or no instance under the bound constants, or a bad kind."""
    decls = type(spec)._actions
    by_label = _by_label(spec.actions)
    entries: list[tuple[str, str]] = [(n, f) for n, f in type(spec)._action_fair.items()
                                      if f is not None]
    table, computed = _table(spec)
    for key, kind in table.items():
        if kind not in KINDS:
            raise SpecDefinitionError(
                f"spec {spec!r}: fairness[{key!r}] = {kind!r}; use 'weak', 'strong', "
                "'weak-family' or 'strong-family'."
            )
        if "|" not in key and key not in decls and key in by_label \
                and kind.endswith("-family"):
            raise SpecDefinitionError(
                f"spec {spec!r}: fairness[{key!r}] names one instance; '-family' applies "
                "to an action name."
            )
        entries.append((key, kind))
    if not computed:
        _refuse_labels_of_the_defaults(spec, [k for k in table if "|" not in k
                                              and k not in decls and k in by_label], by_label)
    out: list[FairnessCondition] = []
    seen: dict[tuple[Any, ...], int] = {}
    guards: dict[str, Any] = {}
    for key, kind in entries:
        for c in _conditions(spec, key, kind, decls, by_label, guards):
            ckey = (c.kind, c.family, c.action_ids, c.guards)
            at = seen.get(ckey)
            if at is None:
                seen[ckey] = len(out)
                out.append(c)
            else:
                # the same condition declared again under another name: a property's
                # fairness=(...) naming either selects it
                new = [n for n in (c.label, *c.aliases)
                       if n != out[at].label and n not in out[at].aliases]
                if new:
                    out[at] = dataclasses.replace(out[at], aliases=(*out[at].aliases, *new))
    out.sort(key=lambda c: c.action_ids)
    return tuple(out)


def _unknown(spec: Spec, key: str, by_label: dict[str, list[ActionInstance]]) -> str:
    name = key.split("(")[0].split("[")[0]
    same = [lbl for lbl in by_label if lbl.split("(")[0].split("[")[0] == name]
    if same:
        return (f"spec {spec!r}: fairness names {key!r}, which is no instance of {name} under "
                f"these constants; its instances are {', '.join(same)}.")
    return (f"spec {spec!r}: fairness names {key!r}, which is neither an action nor an "
            f"action instance label (such as {next(iter(by_label))!r}).")


# ------------------------------------------------------------------ patterns
_PART = re.compile(r"(\w+)(?:\[(\w+)\])?(?:\((.*)\))?", re.S)
_SELECTOR = re.compile(r"(\w+)\((.*)\)", re.S)


@dataclass(frozen=True)
class _Part:
    """One action of a declaration (a name, a label or a pattern), resolved: its
    instances, each with the values of its free parameters (one condition per
    binding of them), the guards selecting it (a selector's) and its label text."""

    insts: tuple[tuple[ActionInstance, tuple[tuple[str, Any], ...], tuple[Guard, ...]], ...]
    #: the names of the free parameters (``None``: an instance label, bound by its values)
    free: tuple[str, ...] | None
    #: per instance: its text in the condition's label
    texts: tuple[str, ...]
    #: the instance ids of each selection (one per binding of the free and selector
    #: arguments): exactly one value is selected at every state (checked on the graph)
    selections: tuple[tuple[int, ...], ...] = ()


def _split_top(text: str, sep: str, opens: str, closes: str) -> list[str]:
    """``text`` split at its top-level ``sep`` (not inside the brackets ``opens`` ...
    ``closes`` or quotes), the pieces as they are."""
    out, depth, cur, quote = [], 0, "", False
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch in opens:
            depth += 1
        elif not quote and ch in closes and depth > 0:
            depth -= 1
        if ch == sep and depth == 0 and not quote:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def _split_args(text: str) -> list[str]:
    """``text`` split at its top-level commas (not inside brackets or quotes), each
    argument stripped (no trailing empty one)."""
    out = [x.strip() for x in _split_top(text, ",", "([{<", ")]}>")]
    if not out[-1]:
        out.pop()
    return out


def _part(spec: Spec, key: str, part: str, decls: Mapping[str, Any],
          by_label: dict[str, list[ActionInstance]], family: bool,
          guards: dict[str, Any]) -> _Part:
    """Resolve one action of the declaration ``key``: an action name (every parameter
    free, or every one taken inside for ``-family``), an instance label (as before:
    that instance, bound by its values), or a pattern ``A[b](p=1, q=*, r=sel(p))``: a
    parameter given a value is fixed, ``*`` taken inside (``\\E q``), a method of the
    spec applied to the state (and other parameters) selects the instance by the state,
    and one not named is free (``\\A p``: one condition per value)."""
    if part in decls:
        insts = [a for a in spec.actions if a.decl.name == part]
        names = tuple(decls[part].params)
        if family:
            text = f"{part}(*)" if names else part
            return _Part(tuple((a, (), ()) for a in insts), (), tuple(text for _ in insts))
        return _Part(tuple((a, a.params, ()) for a in insts), names,
                     tuple(label_of(a, branch=False) for a in insts))
    if part in by_label:
        insts = by_label[part]
        return _Part(tuple((a, () if family else a.params, ()) for a in insts), None,
                     tuple(label_of(a) for a in insts))
    m = _PART.fullmatch(part)
    if m is None or m.group(1) not in decls:
        raise SpecDefinitionError(_unknown(spec, part, by_label) if "|" not in key else
                                  _group_unknown(spec, key, part))
    name, branch, args = m.group(1), m.group(2), m.group(3)
    decl = decls[name]
    if branch is not None and branch not in decl.branches:
        raise SpecDefinitionError(
            f"spec {spec!r}: fairness[{key!r}]: action {name} has no branch {branch!r} "
            f"(its branches: {', '.join(decl.branches) or 'none'}).")
    given: dict[str, str] = {}
    for arg in _split_args(args or ""):
        pname, eq, value = arg.partition("=")
        pname, value = pname.strip(), value.strip()
        if not eq or pname not in decl.params or pname in given or not value:
            raise SpecDefinitionError(
                f"spec {spec!r}: fairness[{key!r}]: {arg!r} in {part!r} must be "
                f"`parameter=value`, `parameter=*` or `parameter=method(parameters)`, once per "
                f"parameter, with a parameter of {name} ({', '.join(decl.params) or 'none'}).")
        given[pname] = value
    order = list(decl.params)
    stars = [p for p in order if given.get(p) == "*" or (family and p not in given)]
    sels: dict[str, tuple[str, list[str]]] = {}
    for p, v in given.items():
        sm = _SELECTOR.fullmatch(v)
        if sm is None or v == "*":
            continue
        method = getattr(spec, sm.group(1), None)
        if not callable(method) or sm.group(1) in decls or sm.group(1).startswith("_"):
            raise SpecDefinitionError(
                f"spec {spec!r}: fairness[{key!r}]: {p}={v} selects the instance by "
                f"{sm.group(1)}(...), which is no method of the spec; write `def "
                f"{sm.group(1)}(self, s, ...)` returning the value of {p} in state s.")
        wants = [x.strip() for x in _split_args(sm.group(2))]
        bad = [w for w in wants if not re.fullmatch(r"-?\d+", w) and (
            w not in decl.params or w in sels or w == p or given.get(w) == "*"
            or (w in given and _SELECTOR.fullmatch(given[w])))]
        if bad:
            raise SpecDefinitionError(
                f"spec {spec!r}: fairness[{key!r}]: {p}={v}: the arguments of a selector "
                f"are integers or parameters of {name} that are free or fixed (not `*` nor "
                f"selected), got {bad[0]!r}.")
        sels[p] = (sm.group(1), wants)
    if family and sels:
        raise SpecDefinitionError(
            f"spec {spec!r}: fairness[{key!r}]: a selector ({', '.join(sels)}) takes one "
            "instance per state; '-family' would take every instance: use 'weak' or "
            "'strong'.")
    fixed = {p: v for p, v in given.items() if p not in sels and v != "*"}
    free = tuple(p for p in order if p not in given and not family)
    out = []
    texts = []
    sel_groups: dict[tuple[Any, ...], list[int]] = {}
    for a in spec.actions:
        if a.decl.name != name or (branch is not None and a.branch != branch):
            continue
        params = dict(a.params)
        if any(tla_text(params[p]) != v for p, v in fixed.items()):
            continue
        gs: list[Guard] = []
        for p, (meth, wants) in sels.items():
            gs.append(_guard(spec, guards, meth, a, wants, p))
        binding = tuple((p, params[p]) for p in free)
        out.append((a, binding, tuple(gs)))
        shown = []
        for p in order:
            if p in sels:
                meth, wants = sels[p]
                shown.append(f"{p}={meth}({', '.join(_arg_text(params, w) for w in wants)})")
            elif p in stars:
                shown.append(f"{p}=*")
            else:
                shown.append(f"{p}={tla_text(params[p])}")
        head = name if branch is None else f"{name}[{branch}]"
        texts.append(f"{head}({', '.join(shown)})" if shown else head)
        if sels:
            skey = (binding, tuple((w, _arg_text(params, w)) for _, ws in sels.values()
                                   for w in ws), tuple(params[p] for p in stars))
            sel_groups.setdefault(skey, []).append(a.id)
    if not out and (fixed or branch is not None) and any(
            a.decl.name == name for a in spec.actions):
        # a value (or branch) that no instance has; an action without instances under
        # these constants (\E i \in {}: A(i)) is never enabled
        raise SpecDefinitionError(_unknown(spec, part, by_label))
    return _Part(tuple(out), free, tuple(texts),
                 tuple(tuple(ids) for ids in sel_groups.values()))


def _guard(spec: Spec, guards: dict[str, Any], method: str, inst: ActionInstance,
           wants: list[str], param: str) -> Guard:
    """The state predicate ``method(s, *wants) == param`` of instance ``inst``: one per
    selector, arguments and value (shared by the conditions naming it)."""
    params = dict(inst.params)
    pos = {p: i for i, p in enumerate(inst.decl.params)}
    args = tuple(inst.arguments[pos[w]] if w in pos else int(w) for w in wants)
    value = inst.arguments[pos[param]]
    call = f"{method}({', '.join(_arg_text(params, w) for w in wants)})"
    name = f"fairness:{call}={tla_text(params[param])}"
    g = guards.get(name)
    if g is None:
        memo = guards.get(f"memo:{call}")
        if memo is None:
            memo = guards[f"memo:{call}"] = _Memo()
        decl = _selector_predicate(method, args, value, memo, name)
        decl.where = source_location(getattr(type(spec), method))
        g = guards[name] = Guard(name, call, decl)
    return g


def _arg_text(params: Mapping[str, Any], arg: str) -> str:
    """A selector's argument as a label shows it: the parameter's value, or the integer."""
    return tla_text(params[arg]) if arg in params else arg


class _Memo:
    """The last state (or batch) a selector was evaluated on, and its value: the guards of
    one selector's values are evaluated on the same view one after another."""

    def __init__(self) -> None:
        self.view: Any = None
        self.value: Any = None


def _selector_predicate(method: str, args: tuple[Any, ...], value: Any, memo: _Memo,
                        name: str) -> PredicateDecl:
    """The guard ``method(s, *args) == value``, as a state predicate (``memo``: the
    selector's last value, shared by the guards of its values)."""
    from .spec import PredicateDecl, RoleKind


    def guard(self: Any, s: Any) -> Any:
        if memo.view is not s:
            memo.view, memo.value = None, getattr(self, method)(s, *args)
            memo.view = s
        return memo.value == value

    guard.__name__ = method
    decl = PredicateDecl(guard, RoleKind.INVARIANT, name=name,
                         doc=f"the state selects {name.split(':', 1)[1]}")
    return decl


def _conditions(spec: Spec, key: str, kind: str, decls: Mapping[str, Any],
                by_label: dict[str, list[ActionInstance]], guards: dict[str, Any]
                ) -> list[FairnessCondition]:
    """The conditions of one declaration ``key: kind``: one per binding of the free
    parameters (none free: one condition), of the instances of every part."""
    base, family = Fairness(kind.split("-")[0]), kind.endswith("-family")
    parts_text = [x.strip() for x in _split_bar(key)]
    if len(set(parts_text)) != len(parts_text):
        raise SpecDefinitionError(f"spec {spec!r}: fairness[{key!r}] names an action twice.")
    parts = [_part(spec, key, p, decls, by_label, family, guards) for p in parts_text]
    frees = {(t, p.free) for t, p in zip(parts_text, parts) if p.free is not None}
    if len({f for _, f in frees}) > 1:
        desc = " and ".join(f"{t} leaves {', '.join(f) or 'none'}" for t, f in sorted(frees))
        raise SpecDefinitionError(
            f"spec {spec!r}: fairness[{key!r}]: the actions of a group must have the same "
            f"parameters left free (one action per binding of them): {desc}. Take a "
            f"parameter inside the condition with `=*` (\"A | B(i=*)\" is WF_vars(A \\/ \\E "
            f"i: B(i))), or make the group one action with '{base}-family'.")
    by_binding: dict[Any, list[tuple[str, ActionInstance, tuple[Guard, ...]]]] = {}
    for p in parts:
        for (a, binding, gs), text in zip(p.insts, p.texts):
            by_binding.setdefault(binding, []).append((text, a, gs))
    single = len(parts) == 1
    name = parts_text[0].split("(")[0].split("[")[0]
    plain = single and (key in decls or key in by_label)
    out = []
    for members in by_binding.values():
        labels = list(dict.fromkeys(text for text, _, _ in members))
        ids = tuple(sorted({a.id for _, a, _ in members}))
        guarded = tuple(sorted((a.id, tuple(g.name for g in gl)) for _, a, gl in members
                               if gl))
        objs = {g.name: g for _, _, gl in members for g in gl}
        sel_ids = set(ids)
        selections = tuple(s for p in parts for s in p.selections if set(s) <= sel_ids)
        label = " \\/ ".join(labels)
        if plain and key in by_label and key not in decls:
            label = key
        fam = name if single else key
        aliases = (key,) if single and not plain and key != label else ()
        out.append(FairnessCondition(base, label, fam, ids, aliases, guarded,
                                     tuple(objs[n] for n in sorted(objs)), selections))
    return out


def _split_bar(key: str) -> list[str]:
    """``key`` split at its top-level ``|`` (not inside parentheses or quotes)."""
    return _split_top(key, "|", "([{", ")]}")


def _group_unknown(spec: Spec, key: str, part: str) -> str:
    return (f"spec {spec!r}: fairness[{key!r}]: a group names actions or action instance "
            f"labels, as 'Rsp | DoRd'; {part!r} is neither under these constants.")


def _refuse_labels_of_the_defaults(spec: Spec, labels: list[str],
                                   by_label: dict[str, list[ActionInstance]]) -> None:
    """Refuse instance labels of the class's table that name every instance of an
    action under the default constants but not under the bound ones: written for the
    defaults, they would leave the other instances without fairness, silently."""
    cls = type(spec)
    defaults = {n: c.default for n, c in cls._consts.items()}
    if not labels or dict(spec.constants) == defaults:
        return
    shell = object.__new__(cls)
    shell.constants = defaults
    try:
        default_insts = list(shell._instances())
    except Exception:  # noqa: BLE001 - domains that cannot be bound to the defaults alone
        return
    default_labels = _by_label(default_insts)
    named_default = {id(a) for lbl in labels for a in default_labels.get(lbl, [])}
    named_bound = {a.id for lbl in labels for a in by_label[lbl]}
    for action in {by_label[lbl][0].decl.name for lbl in labels}:
        dflt = [a for a in default_insts if a.decl.name == action]
        if not all(id(a) in named_default for a in dflt):
            continue
        missed = [label_of(a, branch=False) for a in spec.actions
                  if a.decl.name == action and a.id not in named_bound]
        if missed:
            named = [lbl for lbl in labels if by_label[lbl][0].decl.name == action]
            consts = ", ".join(f"{n}={v}" for n, v in defaults.items())
            ps = ", ".join(cls._actions[action].params) or "p"
            raise SpecDefinitionError(
                f"spec {spec!r}: fairness names {', '.join(named)}: every instance of "
                f"{action} under the default constants ({consts}) but not "
                f"{', '.join(dict.fromkeys(missed))} under these; they would have no "
                f"fairness. For every instance write {{{action!r}: ...}} (TLA+'s \\A {ps}: "
                f"WF_vars({action}({ps}))), or to choose instances by the bound constants, make "
                "fairness a method of the spec (def fairness(self): return {...})."
            )


def select_fairness(spec: Spec, conds: Sequence[FairnessCondition],
                    select: Sequence[str] | None) -> list[FairnessCondition]:
    """Of ``conds``, those a property's ``fairness=(...)`` selects: by action name (every
    condition of that action), instance label, or the key of a group; a name that is
    none of these under the bound constants is an error."""
    if select is None:
        return list(conds)
    decls = type(spec)._actions
    by_label = _by_label(spec.actions)
    known = {n for c in spec.fairness_conditions for n in (c.family, c.label, *c.aliases)}
    unknown = [n for n in select if n not in decls and n not in by_label and n not in known]
    if unknown:
        raise SpecDefinitionError(
            f"spec {spec!r}: a temporal property's fairness names {unknown[0]!r}, which is "
            f"not an action of the spec ({', '.join(decls)}) nor an instance of one under "
            "these constants, nor a key of its fairness table."
        )
    return [c for c in conds
            if c.family in select or c.label in select or any(a in select for a in c.aliases)]
