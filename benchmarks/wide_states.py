"""CPU per transition of one- to four-word states on the same state graph.

The two-phase commit model (``examples/tla/two_phase.py``) with constant padding
variables, which widen the packed state without changing the state graph: no padding
(one word), 40 bits of padding after the model's variables (two words, the padding in
word 1) or before them (two words, the padding in word 0), 100 bits (three words,
128-bit fingerprints) and 160 bits (four words, 128-bit fingerprints). Each
configuration runs ``--repeat`` times (interleaved) in this process; the table shows
the smallest CPU time, the CPU per generated transition and its ratio to one word.

    python benchmarks/wide_states.py [--n 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.tla.two_phase import TwoPhase  # noqa: E402
from modelcheck import Int, Spec, explore  # noqa: E402


def padded(bits: int, first: bool) -> type[Spec]:
    """TwoPhase with ``bits`` bits of constant padding (in cells of at most 60 bits),
    declared before the model's variables (``first``) or after them."""
    pads = {f"pad{i}": Int(0, 2 ** min(60, bits - 60 * i) - 1)
            for i in range((bits + 59) // 60)}
    if not first:
        return type(f"TwoPhasePad{bits}", (TwoPhase,), pads)
    ns: dict[str, Any] = dict(pads)
    for klass in reversed(TwoPhase.__mro__[:-1]):
        ns.update({k: v for k, v in vars(klass).items() if not k.startswith("__")})
    return type(f"TwoPhasePadFirst{bits}", (Spec,), ns)


CONFIGS = [("one word", 0, False), ("two words, padding in word 1", 40, False),
           ("two words, padding in word 0", 40, True), ("three words", 100, False),
           ("four words", 160, False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=8, help="resource managers (N)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    specs = [(name, (padded(b, first) if b else TwoPhase)(N=args.n))
             for name, b, first in CONFIGS]
    best = {name: float("inf") for name, _ in specs}
    res = {}
    for _ in range(args.repeat):
        for name, spec in specs:
            t = time.process_time()
            res[name] = explore(spec)
            best[name] = min(best[name], time.process_time() - t)
    base = best["one word"] / res["one word"].generated_states
    print(f"TwoPhase N={args.n}: {res['one word'].distinct_states:,} states, "
          f"{res['one word'].generated_states:,} transitions")
    print(f"{'state':<32} {'bits':>5} {'words':>5} {'fingerprint':<11} {'CPU s':>6} "
          f"{'ns/transition':>13} {'ratio':>6}")
    for name, spec in specs:
        r = res[name]
        assert (r.distinct_states, r.generated_states) == \
            (res["one word"].distinct_states, res["one word"].generated_states)
        per = best[name] / r.generated_states
        print(f"{name:<32} {spec.layout.bits:>5} {spec.layout.n_words:>5} {r.fingerprint:<11} "
              f"{best[name]:>6.2f} {per * 1e9:>13.0f} {per / base:>6.2f}")


if __name__ == "__main__":
    main()
