"""The report of a run as text: what ``modelcheck check`` prints.

:func:`render_text` turns a :class:`~modelcheck.result.Result` into the human report:
the spec, the violation with its counterexample, the status, counts, fingerprints,
the temporal properties checked (with their verdicts and fairness, :func:`temporal_lines`)
and coverage. The counterexample is rendered by :mod:`modelcheck.trace.render`, as
``modelcheck trace show`` renders the saved trace: the same values (sets ``{1, 2}``)
and the same action labels (``Register(b=1)``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .result import Result, Status, ViolationKind
from .trace.model import Trace
from .trace.render import render_states

__all__ = ["render_text", "temporal_lines"]


def render_text(r: Result) -> str:
    """The human-readable report printed by ``modelcheck check``."""
    out: list[str] = []
    consts = ", ".join(f"{k}={getattr(v, 'name', v)}" for k, v in r.constants.items())
    out.append(f"Spec {r.spec} ({consts})" if consts else f"Spec {r.spec}")
    if r.status is Status.ERROR:
        out.append(f"Error: {r.error}")
        return "\n".join(out)
    if r.violation is not None:
        v = r.violation
        if v.kind is ViolationKind.DEADLOCK:
            out.append(f"Deadlock reached: a state with no enabled action "
                       f"(trace of {len(v.trace)} state{'s' if len(v.trace) != 1 else ''}).")
        elif v.kind is ViolationKind.LIVENESS:
            also = f" (also violated: {', '.join(v.also_violated)})" if v.also_violated else ""
            shape = ("stutters forever in its last state" if v.loop == len(v.trace) - 1
                     else f"loops back to state {(v.loop or 0) + 1}")
            found = "" if r.simulation is None else \
                (f" Found by walk {r.simulation['violation_walk']} "
                 f"({r.simulation['found_length']} states).")
            out.append(f"Temporal property {v.property} ({v.formula}) is violated{also}."
                       f"{found} Counterexample, a fair behaviour ({len(v.trace)} states) "
                       f"that {shape}:")
        else:
            what = "Invariant" if v.kind is ViolationKind.INVARIANT else "Action property"
            if v.property in r.checked.get("initially", ()):
                what = "Initial-state property"
            also = f" (the same level also violates: {', '.join(v.also_violated)})" \
                if v.also_violated else ""
            if r.simulation is not None:
                out.append(f"{what} {v.property} is violated{also}. "
                           + _found_by(r.simulation, len(v.trace)))
            else:
                out.append(f"{what} {v.property} is violated{also}. "
                           "Shortest counterexample, "
                           + ("1 state:" if len(v.trace) == 1 else f"{len(v.trace)} states:"))
        trace = Trace.from_result(r)
        if trace is not None:
            out += render_states(trace, compact=True)
    sim = r.simulation
    status_line = {
        Status.OK: "No error found: every reachable state explored." if sim is None else
              f"No error found in {sim['walks']:,} random walks (seed {sim['seed']}, "
              f"depth at most {sim['depth']}).",
        Status.VIOLATION: "Result: VIOLATION",
        Status.DEADLOCK: "Result: DEADLOCK",
        Status.INCOMPLETE: f"Result: INCOMPLETE ({r.reason or 'stopped'}); counts are partial.",
    }.get(r.status, r.status)
    out.append(status_line)
    if r.message and (r.status is Status.INCOMPLETE
                      or (sim is not None and r.status is Status.OK)):
        out.append(r.message)
    if sim is not None:
        out += [f"WARNING: {w}" for w in sim.get("warnings", [])]
        ends = ", ".join(f"{n} {why}" for why, n in sim["walk_ends"].items() if n)
        out.append(
            f"{sim['walks']:,} walks ({ends or 'none finished'}), {sim['steps']:,} steps, "
            f"{r.seconds:.2f} s ({sim['walks_per_second']:,.0f} walks/s, "
            f"{sim['steps_per_second']:,.0f} steps/s); longest walk {r.depth} steps.")
        more = "at least " if sim.get("distinct_capped") else ""
        out.append(f"{more}{r.distinct_states:,} distinct states visited, "
                   f"{r.generated_states:,} transitions generated and checked.")
        out += temporal_lines(r.liveness)
        return _coverage(r, out)
    out.append(
        f"{r.distinct_states:,} distinct states, {r.generated_states:,} generated, "
        f"depth {r.depth}, {r.seconds:.2f} s ({r.states_per_second:,.0f} distinct states/s)."
    )
    if r.fingerprint == "exact" and r.view:
        out.append("Fingerprints: exact (each state keyed by its view's values, packed on "
                   "their own into one or two 64-bit words).")
    elif r.fingerprint == "exact":
        words = "a 64-bit word" if r.state_words == 1 else "two 64-bit words"
        out.append(f"Fingerprints: exact (the state's {r.state_cells} values packed as one "
                   f"mixed-radix code in {words}).")
    else:
        width = 128 if r.fingerprint == "hash128" else 64
        out.append(f"Fingerprints: {width}-bit hash of the state's {r.state_cells} values "
                   f"({r.state_bits} bits as separate fields); "
                   f"estimated collision probability {r.collision_probability:.2e}.")
    if r.symmetry:
        out.append(f"Symmetry reduction over {', '.join(r.symmetry)}: counts are of "
                   "equivalence classes (canonical states).")
    if r.view:
        out.append(f"View ({', '.join(r.view)}): counts are of distinct views (states "
                   "equal on these variables are one state, the first reached kept).")
    out += temporal_lines(r.liveness)
    return _coverage(r, out)


def temporal_lines(liveness: dict[str, Any]) -> list[str]:
    """The temporal properties a run checked: per property its formula and its verdict
    (``holds``, ``violated``, ``not checked``), as ``Result.liveness`` records them
    (``--format json``), and the fairness conditions they were checked under, listed
    once: on a ``Fairness:`` line when every property shares them, else the most
    common list there and ``under ...`` on the lines of the properties checked under
    others."""
    verdicts: dict[str, str] = liveness.get("properties") or {}
    if not verdicts:
        return []
    formulas: dict[str, str] = liveness.get("formulas") or {}
    fairness: dict[str, list[str]] = liveness.get("fairness") or {}
    reason = liveness.get("reason")
    head = "Temporal properties" + (f" (not checked: {reason})" if reason else "") + ":"
    lists = {n: tuple(fairness.get(n, [])) for n in verdicts}
    counts = Counter(lists.values())
    # the most common list; of equally common ones the longest (the spec's own), then
    # the first
    common = max(counts, key=lambda f: (counts[f], len(f)))
    wn = max(len(n) for n in verdicts)
    wf = max((len(formulas.get(n, "")) for n in verdicts), default=0)
    wv = max(len(v) for v in verdicts.values())
    out = [head]
    for name, verdict in verdicts.items():
        own = lists[name]
        under = "" if own == common else f"under {', '.join(own) or 'no fairness'}"
        out.append(f"  {name:<{wn}}  {formulas.get(name, ''):<{wf}}  {verdict:<{wv}}  "
                   f"{under}".rstrip())
    label = "Fairness" if len(counts) == 1 else "Fairness of the others"
    out.append(f"{label}: {', '.join(common) or 'none'}")
    return out


def _found_by(sim: dict[str, Any], shown: int) -> str:
    """How a simulation found and shrank the trace it shows."""
    text = f"Found by walk {sim['violation_walk']} ({sim['found_length']} states)"
    rep = sim.get("shrinking")
    if rep is None:
        return text + f", not shrunk; {shown} states:"
    proof = {"shorter": "a shortest one, by bounded BFS",
             "minimal": "proved shortest by bounded BFS",
             "unknown": "not proved shortest (the BFS budget ran out)",
             "skipped": "not checked by BFS"}[rep["bfs"]]
    return text + f", shrunk to {shown} states ({proof}):"


def _coverage(r: Result, out: list[str]) -> str:
    if r.coverage:
        out.append("Coverage:")
        w = max(len(c.name + c.params) for c in r.coverage) + 2
        out.append(f"  {'action':<{w}} {'fired':>12} {'new states':>12}")
        # "never enabled" only when every reachable state was explored: a run that
        # stopped early (a violation, Ctrl-C, a bound, the memory limit) did not try
        # every action on every state
        complete = r.status is Status.OK
        for c in r.coverage:
            flag = "   (never enabled)" if c.fired == 0 and complete else ""
            out.append(f"  {c.name + c.params:<{w}} {c.fired:>12,} {c.new_states:>12,}{flag}")
    return "\n".join(out)
