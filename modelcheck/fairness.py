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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .codec import tla_text
from .errors import ModelcheckError, SpecDefinitionError, source_location

if TYPE_CHECKING:
    from .spec import ActionInstance, Spec

__all__ = ["FairnessCondition", "label_of", "resolve_fairness", "select_fairness", "KINDS"]

#: the fairness kinds of ``fair=`` and of the table's values
KINDS = ("weak", "strong", "weak-family", "strong-family")


@dataclass(frozen=True)
class FairnessCondition:
    """``WF``/``SF`` of a set of action instances taken as one action."""

    kind: str  # "weak" | "strong"
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

    @property
    def name(self) -> str:
        return f"{'WF' if self.kind == 'weak' else 'SF'}({self.label})"


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
        if "|" not in key and key not in decls:
            if key not in by_label:
                raise SpecDefinitionError(_unknown(spec, key, by_label))
            if kind.endswith("-family"):
                raise SpecDefinitionError(
                    f"spec {spec!r}: fairness[{key!r}] names one instance; '-family' applies "
                    "to an action name."
                )
        entries.append((key, kind))
    if not computed:
        _refuse_labels_of_the_defaults(spec, [k for k in table if "|" not in k
                                              and k not in decls], by_label)
    out: list[FairnessCondition] = []
    seen: dict[tuple[str, str, tuple[int, ...]], int] = {}
    for key, kind in entries:
        for c in _conditions(spec, key, kind, decls, by_label):
            at = seen.get((c.kind, c.family, c.action_ids))
            if at is None:
                seen[(c.kind, c.family, c.action_ids)] = len(out)
                out.append(c)
            elif c.label != out[at].label and c.label not in out[at].aliases:
                # the same condition declared again under another name: a property's
                # fairness=(...) naming either selects it
                out[at] = dataclasses.replace(out[at], aliases=(*out[at].aliases, c.label))
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


def _conditions(spec: Spec, key: str, kind: str, decls: Mapping[str, Any],
                by_label: dict[str, list[ActionInstance]]) -> list[FairnessCondition]:
    """The conditions of one declaration ``key: kind``."""
    base, family = kind.split("-")[0], kind.endswith("-family")
    if "|" in key:
        parts = _group(spec, key, decls, by_label)
        # the instances of every named action (or the named instances), as one action
        # per binding of the parameters (all of them for "-family")
        by_params: dict[Any, list[tuple[str, ActionInstance]]] = {}
        for part in parts:
            insts = ([a for a in spec.actions if a.decl.name == part] if part in decls
                     else by_label[part])
            for a in insts:
                by_params.setdefault(() if family else a.params, []).append((part, a))
        out = []
        for members in by_params.values():
            labels: list[str] = []
            for part, a in members:
                if part not in decls:
                    lbl = label_of(a)  # a named instance
                elif family and a.params:
                    lbl = f"{part}(*)"
                else:
                    lbl = label_of(a, branch=False)
                if lbl not in labels:
                    labels.append(lbl)
            out.append(FairnessCondition(base, " \\/ ".join(labels), key,
                                         tuple(sorted(a.id for _, a in members))))
        return out
    if key not in decls:  # an instance label
        insts = by_label[key]
        return [FairnessCondition(base, key, insts[0].decl.name, tuple(a.id for a in insts))]
    insts = [a for a in spec.actions if a.decl.name == key]
    if not insts:
        return []  # an action with no instance under these constants: never enabled
    if family and decls[key].params:
        return [FairnessCondition(base, f"{key}(*)", key, tuple(a.id for a in insts))]
    groups: dict[str, list[int]] = {}
    for a in insts:
        groups.setdefault(label_of(a, branch=False), []).append(a.id)
    return [FairnessCondition(base, lbl, key, tuple(ids)) for lbl, ids in groups.items()]


def _group(spec: Spec, key: str, decls: Mapping[str, Any],
           by_label: dict[str, list[ActionInstance]]) -> list[str]:
    """The actions (names or instance labels) of a fairness group ``"A | B"``: TLA+'s
    ``WF_vars(A(p) \\/ B(p))``; named actions must have the same parameters."""
    parts = [x.strip() for x in key.split("|")]
    unknown = [x for x in parts if x not in decls and x not in by_label]
    if unknown:
        raise SpecDefinitionError(
            f"spec {spec!r}: fairness[{key!r}]: a group names actions or action instance "
            f"labels, as 'Rsp | DoRd'; {unknown[0]!r} is neither under these constants."
        )
    if len(set(parts)) != len(parts):
        raise SpecDefinitionError(f"spec {spec!r}: fairness[{key!r}] names an action twice.")
    params = {tuple(decls[x].params) for x in parts if x in decls}
    if len(params) > 1:
        raise SpecDefinitionError(
            f"spec {spec!r}: fairness[{key!r}]: the actions of a group must have the same "
            f"parameters (one action per binding of them), got "
            f"{' and '.join(str(list(p)) for p in sorted(params))}."
        )
    return parts


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
    groups = {c.family for c in spec.fairness_conditions if "|" in c.family}
    unknown = [n for n in select if n not in decls and n not in by_label and n not in groups]
    if unknown:
        raise SpecDefinitionError(
            f"spec {spec!r}: a temporal property's fairness names {unknown[0]!r}, which is "
            f"not an action of the spec ({', '.join(decls)}) nor an instance of one under "
            "these constants."
        )
    return [c for c in conds
            if c.family in select or c.label in select or any(a in select for a in c.aliases)]
