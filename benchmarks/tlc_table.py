#!/usr/bin/env python3
"""Every examples/tla/ port against TLC 2.20 with one worker; print a table.

    python benchmarks/tlc_table.py --examples DIR                  # every port
    python benchmarks/tlc_table.py --examples DIR --only TwoPhase --only MCInnerFIFO
    python benchmarks/tlc_table.py --examples DIR --cap 120        # seconds per side

``DIR`` is a checkout of github.com/tlaplus/Examples (the TLA+ sources and cfgs the
ports translate; default ``../shared/tlaplus-examples``); TLC is
``../shared/tlc/tla2tools.jar`` with its community modules (``--tlc`` to change it).
Models that import tlaplus/tlapm's proof modules need its ``library/`` folder (or a
folder with ``TLAPS.tla`` and ``FiniteSetTheorems.tla``) given with ``--library DIR``:
MCBakery extends ``TLAPS``; MCPaxos, MCVoting and MCPaxosTiny load ``Consensus.tla``,
which extends ``FiniteSetTheorems`` (TLC only parses them). MCCRDT and MCReplicatedLog
ASSUME TLC's action composition, turned on with ``-Dtlc2.tool.impl.Tool.cdot=true``.

Each model runs twice in this one run, one process at a time: TLC
(``java ... tlc2.TLC -workers 1``, with ``-deadlock`` when the port does not check
deadlocks, on the model's cfg in a copy of its folder), then ``python -m modelcheck
check`` on the port (one process, import included: start-up is part of every figure;
Python loads modelcheck's modules from bytecode compiled before the table, as an
installed package has them, even where ``PYTHONDONTWRITEBYTECODE`` is set).
CPU seconds are the child's user + system time (``getrusage(RUSAGE_CHILDREN)``; for
TLC all the JVM's threads). Columns: distinct states of both (the row is flagged
``MISMATCH`` unless they are equal and TLC's depth is ours plus one), both CPU times,
and ``ratio`` = TLC CPU / ours (above 1: modelcheck is faster); the last line is the
geometric mean of the ratios over the rows that agree. A side that runs longer than
``--cap`` seconds is stopped and the row shows ``>cap``. Exit code 1 on a mismatch.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: ../shared beside the checkout (found upwards, so that a worktree nested deeper finds it too)
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared").is_dir()),
              ROOT.parent / "shared")


@dataclass(frozen=True)
class Row:
    """A port (``module:Class`` under examples/tla/) and the TLC model it translates:
    the folder under ``specifications/``, the module TLC loads and its cfg."""

    port: str
    folder: str
    tla: str
    cfg: str
    deadlock: bool  # whether both sides check deadlocks
    java: tuple[str, ...] = ()  # JVM options the model needs (its manifest's)


#: TLC's action composition (``A \cdot B``), which MCCRDT and MCReplicatedLog ASSUME on
CDOT = ("-Dtlc2.tool.impl.Tool.cdot=true",)


def _row(port: str, folder: str, tla: str, cfg: str | None = None, *,
         deadlock: bool = True, java: tuple[str, ...] = ()) -> Row:
    return Row(port, folder, tla, cfg or tla.replace(".tla", ".cfg"), deadlock, java)


#: name: the port and its model (the tlaplus/Examples manifest's cfg)
ROWS: dict[str, Row] = {
    "MCBakery": _row("bakery:Bakery", "Bakery-Boulangerie", "MCBakery.tla", deadlock=False),
    "MCChangRoberts": _row("chang_roberts:MCChangRoberts", "chang_roberts", "MCChangRoberts.tla",
                           deadlock=False),
    "MCCRDT": _row("crdt:MCCRDT", "FiniteMonotonic", "MCCRDT.tla", deadlock=False,
                   java=CDOT),
    "Disruptor_MPMC_liveliness": _row("disruptor_liveness:DisruptorLiveness", "Disruptor",
                                      "Disruptor_MPMC.tla", "Disruptor_MPMC_liveliness.cfg",
                                      deadlock=False),
    "Disruptor_SPMC": _row("disruptor_spmc:DisruptorSPMC", "Disruptor", "Disruptor_SPMC.tla"),
    "MCEcho": _row("echo:MCEcho", "echo", "MCEcho.tla", deadlock=False),
    "ElevatorLivenessMedium": _row("elevator_liveness:ElevatorLiveness", "MultiCarElevator",
                                   "Elevator.tla", "ElevatorLivenessMedium.cfg",
                                   deadlock=False),
    "MCInnerFIFO": _row("inner_fifo:InnerFIFO", "SpecifyingSystems/FIFO", "MCInnerFIFO.tla"),
    "kvstore": _row("kvstore:KVStore", "btree", "kvstore.tla", deadlock=False),
    "LiveHourClock": _row("live_hour_clock:LiveHourClock", "SpecifyingSystems/Liveness",
                          "LiveHourClock.tla"),
    "MCLiveWriteThroughCache": _row("live_write_through_cache:LiveWriteThroughCache",
                                    "SpecifyingSystems/Liveness",
                                    "MCLiveWriteThroughCache.tla", deadlock=False),
    "MCPaxos": _row("mc_paxos:MCPaxos", "Paxos", "MCPaxos.tla"),
    "MCPaxosTiny": _row("mc_paxos_tiny:MCPaxosTiny", "PaxosHowToWinATuringAward",
                        "MCPaxos.tla", "MCPaxosTiny.cfg"),
    "MCVoting": _row("mc_voting:MCVoting", "Paxos", "MCVoting.tla", deadlock=False),
    "MultiPaxos_MC_small": _row("multi_paxos:MultiPaxos", "MultiPaxos-SMR",
                                "MultiPaxos_MC.tla", "MultiPaxos_MC_small.cfg"),
    "MCReplicatedLog": _row("replicated_log:MCReplicatedLog", "FiniteMonotonic",
                            "MCReplicatedLog.tla", deadlock=False, java=CDOT),
    "SimpleAllocator": _row("simple_allocator:SimpleAllocator", "allocator",
                            "SimpleAllocator.tla"),
    "SimpleRegular": _row("simple_regular:SimpleRegular", "TeachingConcurrency",
                          "SimpleRegular.tla", deadlock=False),
    "SimplifiedFastPaxos": _row("simplified_fast_paxos:SimplifiedPaxos",
                                "SimplifiedFastPaxos", "Paxos.tla"),
    "SingleLaneBridge": _row("single_lane_bridge:SingleLaneBridge", "SingleLaneBridge",
                             "MC.tla"),
    "SpanTree": _row("span_tree:SpanTree", "SpanningTree", "SpanTree.tla", deadlock=False),
    "MCtcp": _row("tcp:MCtcp", "tcp", "MCtcp.tla"),
    "TokenRing": _row("token_ring:TokenRing", "ewd426", "TokenRing.tla"),
    "TwoPhase": _row("two_phase:TwoPhase", "transaction_commit", "TwoPhase.tla"),
}


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


#: the environment of the children: one OpenMP thread; for ours, see :func:`bytecode_env`
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def bytecode_env() -> dict[str, str]:
    """The environment for ``modelcheck`` runs with compiled bytecode, as an installed
    package has it (pip compiles a package's modules when it installs them): Python may
    write and read ``__pycache__`` (``PYTHONDONTWRITEBYTECODE`` removed). The modules
    are compiled once before the table (:func:`compile_ours`), not in a timed run."""
    return {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}


def compile_ours(env: dict[str, str]) -> None:
    """Compile modelcheck's and the ports' modules (into their ``__pycache__``)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "modelcheck", "examples"],
                   cwd=ROOT, env=env, check=True, capture_output=True)


def _timed(cmd: list[str], cwd: pathlib.Path, cap: float,
           env: dict[str, str] | None = None) -> tuple[str | None, float]:
    """Run ``cmd``; its stdout (None if stopped at ``cap`` seconds) and CPU seconds."""
    c0 = _cpu_children()
    try:
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=cap,
                             env=ENV if env is None else env)
    except subprocess.TimeoutExpired:
        return None, _cpu_children() - c0
    return out.stdout + out.stderr, _cpu_children() - c0


def run_tlc(row: Row, examples: pathlib.Path, tlc: pathlib.Path, cap: float,
            library: list[pathlib.Path]) -> dict:
    """TLC on the row's model, one worker: distinct states, depth, CPU seconds."""
    src = examples / "specifications" / row.folder
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp) / "model"
        shutil.copytree(src, work)
        modules = os.pathsep.join(str(p) for p in [tlc / "modules", *library])
        cmd = ["java", "-XX:+UseParallelGC", "-Xmx8g", *row.java, f"-DTLA-Library={modules}",
               "-cp", str(tlc / "tla2tools.jar"), "tlc2.TLC", "-workers", "1",
               *([] if row.deadlock else ["-deadlock"]),
               "-metadir", str(pathlib.Path(tmp) / "meta"), "-config", row.cfg, row.tla]
        out, cpu = _timed(cmd, work, cap)
    if out is None:
        return {"cpu": cpu, "timeout": True}
    g = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out)
    d = re.search(r"depth of the complete state graph search is (\d+)", out)
    bad = re.search(r"^Error: (.*)$", out, re.M)
    return {"cpu": cpu, "timeout": False,
            "distinct": int(g.group(2).replace(",", "")) if g else None,
            "depth": int(d.group(1)) if d else None,
            "error": bad.group(1) if bad else (None if g and d else out[-500:])}


def run_ours(row: Row, cap: float, env: dict[str, str]) -> dict:
    """``modelcheck check`` on the port, one process: distinct states, depth, CPU."""
    cmd = [sys.executable, "-m", "modelcheck", "check", f"examples.tla.{row.port}",
           "--format", "json", "-q"]
    out, cpu = _timed(cmd, ROOT, cap, env)
    if out is None:
        return {"cpu": cpu, "timeout": True}
    try:
        r = json.loads(out[out.index("{"):])
    except ValueError:
        return {"cpu": cpu, "timeout": False, "error": out[-500:]}
    return {"cpu": cpu, "timeout": False, "distinct": r.get("distinct_states"),
            "depth": r.get("depth"), "error": None if r.get("status") == "ok"
            else f"{r.get('status')}: {r.get('message') or r.get('violation')}"}


def _cpu_text(side: dict, cap: float) -> str:
    return f">{cap:.0f}" if side["timeout"] else f"{side['cpu']:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(ROWS), metavar="NAME",
                    help=f"a row to run (repeatable): {', '.join(ROWS)}")
    ap.add_argument("--cap", type=float, default=900.0,
                    help="seconds a side may run on one model (default 900)")
    ap.add_argument("--examples", type=pathlib.Path, default=SHARED / "tlaplus-examples",
                    help="a checkout of github.com/tlaplus/Examples")
    ap.add_argument("--tlc", type=pathlib.Path, default=SHARED / "tlc",
                    help="the folder of tla2tools.jar and modules/")
    ap.add_argument("--library", type=pathlib.Path, action="append", default=[],
                    metavar="DIR", help="another folder of TLA+ modules for TLC (TLAPS.tla)")
    args = ap.parse_args()
    if not (args.examples / "specifications").is_dir():
        ap.error(f"{args.examples} is no checkout of github.com/tlaplus/Examples (it has no "
                 "specifications/ folder): clone it there or give --examples DIR.")
    if not (args.tlc / "tla2tools.jar").is_file() or shutil.which("java") is None:
        ap.error(f"TLC needs java and {args.tlc / 'tla2tools.jar'}; give --tlc DIR.")
    print(f"{'model':<26} {'TLC distinct':>12} {'ours':>12} {'TLC CPU s':>9} "
          f"{'ours CPU s':>10} {'ratio':>6}", flush=True)
    env = bytecode_env()
    compile_ours(env)
    return _table(args, env)


def _table(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Run the rows and print the table (ours in the environment ``env``)."""
    ratios: list[float] = []
    bad = 0
    for name in args.only or ROWS:
        row = ROWS[name]
        tlc = run_tlc(row, args.examples, args.tlc, args.cap, args.library)
        ours = run_ours(row, args.cap, env)
        note = ""
        if tlc["timeout"] or ours["timeout"]:
            ratio = "-"
        elif tlc["error"] or ours["error"]:
            bad += 1
            ratio, note = "-", f"  ERROR TLC: {tlc['error']}; ours: {ours['error']}"
        elif (tlc["distinct"], tlc["depth"]) != (ours["distinct"], ours["depth"] + 1):
            bad += 1
            ratio = "-"
            note = (f"  MISMATCH (depth TLC {tlc['depth']}, ours {ours['depth']} + 1)")
        else:
            r = tlc["cpu"] / max(ours["cpu"], 1e-9)
            ratios.append(r)
            ratio = f"{r:.2f}"
        def count(side: dict) -> str:
            return "-" if side.get("distinct") is None else f"{side['distinct']:,}"
        print(f"{name:<26} {count(tlc):>12} {count(ours):>12} {_cpu_text(tlc, args.cap):>9} "
              f"{_cpu_text(ours, args.cap):>10} {ratio:>6}{note}", flush=True)
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{'geometric mean':<26} {'':>12} {'':>12} {'':>9} {'':>10} {gm:>6.2f}"
              f"  ({len(ratios)} rows)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
