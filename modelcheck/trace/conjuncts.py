"""Guard conjuncts: which part of an action's guard is false in a state, and why.

This module owns :func:`guard_conjuncts`, the explanation :func:`~modelcheck.trace.replay.replay`
gives for an action that is not enabled. It rewrites a copy of the action's source
(an AST probe, cached per function) so that each ``return E1 & E2 ...`` reports its
top-level conjuncts, the state values they read and the arguments of spec helpers
they call; each :class:`Conjunct` is then evaluated in the state, and a false helper
call is explained by the helper's own conjuncts. :func:`conjunct_lines` prints them.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import source_location
from ..layout import Layout
from ..spec import ActionInstance
from ..views import ArrayView, NextView
from .render import format_value

__all__ = [
    "Conjunct",
    "guard_conjuncts",
    "conjunct_lines",
]


@dataclass(frozen=True)
class Conjunct:
    """One top-level conjunct of an action's guard (or of a helper it calls), evaluated
    in a state. ``inner`` explains a false call of a spec helper (``self.caught_up(s, b)``)
    by that helper's own false conjuncts."""

    text: str
    where: str
    value: Any  # bool, or the exception it raised
    reads: tuple[tuple[str, Any], ...]  # (``s.x[b]`` or a local name, value) inside it
    inner: tuple[Conjunct, ...] = ()


@dataclass(frozen=True)
class _ConjMeta:
    text: str
    line: int
    reads: list[str]  # ``s.x`` / ``s.x[...]`` texts, one lambda each
    names: list[str]  # plain names, looked up in the function's locals
    call: str | None  # ``NAME`` when the conjunct is ``self.NAME(args)``


@dataclass(frozen=True)
class _Probe:
    fn: Callable[..., Any]
    returns: dict[int, list[_ConjMeta]]  # per rewritten return statement


_PROBES: dict[tuple[Any, bool], _Probe | None] = {}
_CALL_DEPTH = 2


def _flatten_and(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return _flatten_and(node.left) + _flatten_and(node.right)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [x for v in node.values for x in _flatten_and(v)]
    return [node]


def _state_reads(node: ast.expr, sname: str,
                 skip: frozenset[str]) -> tuple[list[ast.expr], list[str]]:
    """``s.x`` and ``s.x[...]`` sub-expressions and plain names (possibly locals such as
    ``b = s.leader[p]``), outside nested lambdas and comprehensions."""
    out: list[ast.expr] = []
    names: list[str] = []

    def visit(n: ast.AST) -> None:
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.GeneratorExp)):
            return
        if (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
                and isinstance(n.value.value, ast.Name) and n.value.value.id == sname):
            out.append(n)
            visit(n.slice)
            return
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name):
                if n.value.id == sname:
                    out.append(n)
                return  # self.MaxLog, module.X: not a local
            visit(n.value)
            return
        if isinstance(n, ast.Name) and n.id not in skip and n.id not in names:
            names.append(n.id)
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return out, names


def _lambda(body: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])
    return ast.Lambda(args, body)


class _ReturnRewriter(ast.NodeTransformer):
    """Rewrites ``return E1 & E2`` in the function body (not in nested functions) to
    ``return (id, [lambda: E1, ...], [lambda: s.x[b], ...], [lambda: (args,) | None, ...],
    locals())``: the conjuncts, the state reads in them and the arguments of helper
    calls, all evaluated later, in the function's scope."""

    def __init__(self, src: str, selfname: str, sname: str, line0: int,
                 skip: frozenset[str]) -> None:
        self.src = src
        self.selfname = selfname
        self.sname = sname
        self.line0 = line0
        self.skip = skip
        self.depth = 0
        self.returns: dict[int, list[_ConjMeta]] = {}

    def _text(self, node: ast.AST) -> str:
        return " ".join((ast.get_source_segment(self.src, node) or ast.unparse(node)).split())

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:  # noqa: N802 - ast API
        self.depth += 1
        if self.depth == 1:
            self.generic_visit(node)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # noqa: N815

    def visit_Lambda(self, node: ast.Lambda) -> Any:  # noqa: N802 - ast API
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:  # noqa: N802 - ast API
        return node

    def visit_Return(self, node: ast.Return) -> Any:  # noqa: N802 - ast API
        if node.value is None:
            return node
        rid = len(self.returns)
        metas: list[_ConjMeta] = []
        conj_l: list[ast.expr] = []
        read_l: list[ast.expr] = []
        call_l: list[ast.expr] = []
        for c in _flatten_and(node.value):
            reads: list[str] = []
            found, names = _state_reads(c, self.sname, self.skip)
            for r in found:
                rt = self._text(r)
                if rt not in reads:
                    reads.append(rt)
                    read_l.append(_lambda(r))
            call = None
            if (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                    and isinstance(c.func.value, ast.Name) and c.func.value.id == self.selfname
                    and not c.keywords and not any(isinstance(a, ast.Starred) for a in c.args)):
                call = c.func.attr
                call_l.append(_lambda(ast.Tuple(list(c.args), ast.Load())))
            else:
                call_l.append(ast.Constant(None))
            metas.append(_ConjMeta(self._text(c), c.lineno + self.line0, reads, names, call))
            conj_l.append(_lambda(c))
        self.returns[rid] = metas
        value = ast.Tuple([ast.Constant(rid), ast.List(conj_l, ast.Load()),
                           ast.List(read_l, ast.Load()), ast.List(call_l, ast.Load()),
                           ast.Call(ast.Name("locals", ast.Load()), [], [])], ast.Load())
        return ast.copy_location(ast.Return(value), node)


def _probe_for(fn: Callable[..., Any], is_action: bool) -> _Probe | None:
    """A copy of ``fn`` whose return statements report their conjuncts, or None when
    its source cannot be analysed (a lambda, a builtin, a file that changed...)."""
    fn = inspect.unwrap(fn)
    key = (fn, is_action)
    if key in _PROBES:
        return _PROBES[key]
    probe: _Probe | None = None
    try:
        lines, start = inspect.getsourcelines(fn)
        src = textwrap.dedent("".join(lines))
        fdef = ast.parse(src).body[0]
        if isinstance(fdef, ast.FunctionDef) and len(fdef.args.args) >= 2:
            fdef.decorator_list = []
            params = [a.arg for a in fdef.args.args]
            # actions show their parameters in the label; helpers show theirs as reads
            skip = frozenset(params) if is_action else frozenset(params[:2])
            rw = _ReturnRewriter(src, params[0], params[1], start - 1, skip)
            rw.visit(fdef)
            if rw.returns:
                freevars = list(fn.__code__.co_freevars)
                outer = ast.FunctionDef(
                    name="__mc_outer__",
                    args=ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in freevars],
                                       vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                       defaults=[]),
                    body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
                    decorator_list=[], returns=None)
                module = ast.Module([outer], type_ignores=[])
                ast.fix_missing_locations(module)
                ast.increment_lineno(module, start - 1)
                code = compile(module, inspect.getsourcefile(fn) or "<spec>", "exec")
                ns: dict[str, Any] = {}
                exec(code, fn.__globals__, ns)  # noqa: S102 - the spec's own source, rewritten
                cells = [c.cell_contents for c in (fn.__closure__ or ())]
                probe = _Probe(ns["__mc_outer__"](*cells), rw.returns)
    except Exception:  # noqa: BLE001 - any failure: no conjunct analysis, plain message
        probe = None
    _PROBES[key] = probe
    return probe


def guard_conjuncts(kernel: Any, inst: ActionInstance, cells: Sequence[int]) -> list[Conjunct]:
    """The top-level conjuncts of ``inst``'s guard (the ``&`` operands of the ``return``
    expression the action reached), each evaluated in the state ``cells``. A false call
    of a spec helper (``self.caught_up(s, b)``) is explained by the helper's conjuncts.

    Empty when the action's source cannot be analysed.
    """
    s = kernel.scalar_view(cells)
    return _conjuncts(kernel, inst.decl.fn, (kernel.spec, s, NextView(s),
                                             *inst.arguments), True, 0)


def _conjuncts(kernel: Any, fn: Callable[..., Any], args: tuple[Any, ...], is_action: bool,
               depth: int) -> list[Conjunct]:
    probe = _probe_for(fn, is_action)
    if probe is None:
        return []
    try:
        rid, conj_fns, read_fns, call_fns, local_vars = probe.fn(*args)
    except Exception:  # noqa: BLE001 - the real evaluation reports spec errors
        return []
    metas = probe.returns.get(rid, [])
    reads: dict[str, Any] = {}
    for text, f in zip([r for m in metas for r in m.reads], read_fns):
        reads[text] = _try(f)
    rel = source_location(fn).rsplit(":", 1)[0]
    out: list[Conjunct] = []
    for m, f, cf in zip(metas, conj_fns, call_fns):
        value = _try(f)
        if isinstance(value, (np.bool_, np.ndarray)) and np.ndim(value) == 0:
            value = bool(value)
        shown = [(r, reads.get(r)) for r in m.reads if r != m.text]
        shown += [(n, local_vars[n]) for n in m.names
                  if n != m.text and n in local_vars
                  and isinstance(local_vars[n], (int, np.integer, np.bool_))]
        inner: list[Conjunct] = []
        if value is False and m.call is not None and cf is not None and depth < _CALL_DEPTH:
            helper = getattr(type(kernel.spec), m.call, None)
            call_args = _try(cf)
            if inspect.isfunction(helper) and isinstance(call_args, tuple):
                inner = [c for c in _conjuncts(kernel, helper, (kernel.spec, *call_args),
                                               False, depth + 1) if c.value is not True]
        out.append(Conjunct(m.text, f"{rel}:{m.line}", value, tuple(shown), tuple(inner)))
    return out


def _try(f: Callable[[], Any]) -> Any:
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - shown to the user as the value
        return e


def _read_text(layout: Layout, text: str, value: Any) -> str:
    if isinstance(value, Exception):
        return f"{text} raises {type(value).__name__}"
    var = text.split(".", 1)[1].split("[", 1)[0] if "." in text else ""
    info = layout.vars.get(var)
    v = value
    if isinstance(v, (np.bool_, bool)):
        return f"{text} = {'TRUE' if v else 'FALSE'}"
    if isinstance(v, np.integer):
        v = int(v)
    if info is not None and isinstance(v, int):
        c = layout.cells[info.first_cell]
        return f"{text} = {layout.display_value(c, v)}"
    return f"{text} = {v}"


def _is_array_view(v: Any) -> bool:
    return isinstance(v, ArrayView)


def conjunct_lines(layout: Layout, conj: Sequence[Conjunct], indent: str) -> list[str]:
    """Conjuncts as text for a replay message: each with its source location, the state
    values it reads and, for a false helper call, the helper's false conjuncts below it."""
    lines: list[str] = []
    for c in conj:
        status = "" if c.value is False else (
            f"  [raised {type(c.value).__name__}: {c.value}]" if isinstance(c.value, Exception)
            else f"  [is {format_value(c.value)}, not a boolean]")
        lines.append(f"{indent}{c.text}    ({c.where}){status}")
        reads = [_read_text(layout, t, v) for t, v in c.reads
                 if v is not None and not _is_array_view(v)]
        if reads:
            lines.append(f"{indent}  where {', '.join(reads)}")
        if c.inner:
            lines.append(f"{indent}  false inside it:")
            lines.extend(conjunct_lines(layout, c.inner, indent + "    "))
    return lines
