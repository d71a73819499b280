"""A deliberately naive reference explorer for tests.

Python tuples, the scalar evaluator only, a Python set, and an orbit
canonicaliser that permutes *values* (dicts), not packed words: it shares no code
with the batch explorer, the fingerprints or the symmetry module.
"""

from __future__ import annotations

import itertools

from modelcheck.kernel import Kernel

__all__ = ["brute_force", "assert_replays"]


def brute_force(spec, symmetry_sets=None) -> tuple[int, int]:
    """(distinct states, depth) by a plain BFS over tuples with the scalar evaluator."""
    k = Kernel(spec, symmetry=False)
    canon = _canonicaliser(spec, symmetry_sets) if symmetry_sets else (lambda c: tuple(c))
    seen = {canon(c) for c in k.initial_states()}
    frontier = [list(c) for c in k.initial_states()]
    depth = 0
    while True:
        nxt = []
        for cells in frontier:
            for _, succ in k.successors(cells):
                key = canon(succ)
                if key not in seen:
                    seen.add(key)
                    nxt.append(succ)
        if not nxt:
            return len(seen), depth
        depth += 1
        frontier = nxt


def _canonicaliser(spec, sets):
    """Orbit representative by brute force over values (not packed words)."""
    layout = spec.layout
    (name, ids), = sets.items()
    perms = [dict(zip(ids, p)) for p in itertools.permutations(ids)]

    def permute(values, pi):
        out = {}
        for var, info in layout.vars.items():
            v = values[var]
            cell = layout.cells[info.first_cell]
            if info.dim_names and info.dim_names[0] == name:
                v = {pi[i]: x for i, x in v.items()}
            if cell.ref == name:
                if cell.kind == "set":
                    v = ({i: sorted(pi[m] for m in x) for i, x in v.items()} if info.dims
                         else sorted(pi[m] for m in v))
                else:
                    v = ({i: pi.get(x, x) for i, x in v.items()} if info.dims
                         else pi.get(v, v))
            out[var] = v
        return out

    def canon(cells):
        values = layout.values_from_cells(cells)
        return min(tuple(layout.cells_from_values(permute(values, pi))) for pi in perms)

    return canon


def assert_replays(spec, trace) -> None:
    """Every step of a trace is a transition of the spec by the recorded action,
    evaluated with the scalar evaluator (symmetry off: the states are real ones)."""
    k = Kernel(spec, symmetry=False)
    layout = spec.layout
    cells = layout.cells_from_values(trace[0].state)
    assert cells in k.initial_states()
    for step in trace[1:]:
        inst = spec.action_by_label(step.action, step.params)
        assert inst is not None
        nxt = k.step(cells, inst)
        assert nxt == layout.cells_from_values(step.state)
        cells = nxt


def random_walk(kernel: Kernel, choices: list[int], start: int = 0) -> list[int]:
    """The state reached from initial state ``start`` (modulo their number) by taking,
    at each step, successor ``choice`` (modulo their number); stops at a deadlock."""
    inits = kernel.initial_states()
    cells = inits[start % len(inits)]
    for c in choices:
        succ = kernel.successors(cells)
        if not succ:
            break
        cells = succ[c % len(succ)][1]
    return cells
