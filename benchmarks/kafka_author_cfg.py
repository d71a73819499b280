"""The author's published cfg of the Kafka replication model, exhaustively, level by level.

Runs modelcheck on ``KafkaReplicationView`` (v3.5) or ``KafkaReplicationKip966View``
(KIP-966) with the constants and invariants of the author's cfg
(``../shared/kafka-tlaplus/<model>/kafka_replication_*.cfg``: three brokers, RF 3,
``Values = {A}``, MinISR 2, InitIsrSize 2, one unclean (data-loss) shutdown, one fence,
``VIEW view``), within a wall-clock budget (SIGINT at the end of it: the run stops at
the last complete level, its checkpoint kept for ``--resume``), under ``nice -n 19``,
and prints the level table: states new at each depth, distinct so far, the growth
ratio, seconds. From the last levels it fits ``log(new states)`` as a quadratic in the
depth (the Gaussian level profile of a bounded BFS) and extrapolates the total states,
the depth, the memory (bytes a state, measured) and the time (states a second,
measured). ``--tlc`` runs TLC 2.20 (one worker, ``-deadlock``, the cfg as published)
for the same budget and prints how far it got. See docs/kafka-replication.md,
"The author's configuration".

    python benchmarks/kafka_author_cfg.py [--model v3.5|kip-966] [--budget SECONDS]
        [--backend check|workers|spark] [--run-dir DIR] [--resume] [--const K=V ...]
        [--tlc] [--from-json FILE [--backtest]]
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
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from specs.kafka_replication import constants_from_cfg, invariants_from_cfg  # noqa: E402

#: ../shared beside the checkout (found upwards, so that a worktree nested deeper finds it too)
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared").is_dir()),
              ROOT.parent / "shared")
MODELS = {
    "v3.5": ("v3.5", "kafka_replication_v3_5", "KafkaReplicationView"),
    "kip-966": ("kip-966", "kafka_replication_kip_966", "KafkaReplicationKip966View"),
}
#: the port's type bounds (not in the TLA+ model): a run that needs more stops with a
#: spec error naming the variable, so a run without one is TLC's unbounded run.
#: On the v3.5 cfg MaxEpoch 6 (the default) is exceeded at depth 12 (a partition epoch
#: of 7), hence 15; the metadata log grows with the partition epoch, hence 16; MsgCap 4
#: at depth 18 (five fetch requests in flight), hence 8 (not measured past depth 17).
BOUNDS = {"MaxEpoch": 15, "MaxMetadataLog": 16, "MsgCap": 8, "DiscardCap": 12}


def author_cfg(model: str) -> str:
    folder, name, _ = MODELS[model]
    return (SHARED / "kafka-tlaplus" / folder / f"{name}.cfg").read_text()


def command(model: str, backend: str, workers: int, run_dir: pathlib.Path,
            max_states: int, resume: bool, consts: list[str]) -> list[str]:
    """The modelcheck command line for the author's cfg (``consts`` override it)."""
    text = author_cfg(model)
    values = {**constants_from_cfg(text), **BOUNDS}
    for kv in consts:
        k, _, v = kv.partition("=")
        values[k] = v
    cmd = ["nice", "-n", "19", sys.executable, "-m", "modelcheck",
           "spark" if backend == "spark" else "check",
           f"specs/kafka_replication.py:{MODELS[model][2]}"]
    for k, v in values.items():
        cmd += ["--const", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    for inv in invariants_from_cfg(text):
        cmd += ["--invariant", inv]
    cmd += ["--no-deadlock", "--checkpoint-dir", str(run_dir / "ckpt"),
            "--max-states", str(max_states), "--format", "json"]
    if backend == "workers":
        cmd += ["--workers", str(workers)]
    elif backend == "check":
        cmd += ["--memory-limit", "8G"]
    if resume:
        cmd.append("--resume")
    return cmd


def _default_sigint() -> None:
    # a job started in the background of a shell inherits SIGINT ignored; the JVM
    # keeps it so (TLC ran on past its budget), so the child gets the default back
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_budgeted(cmd: list[str], budget: float, cwd: pathlib.Path,
                 stdout: pathlib.Path, stderr: pathlib.Path,
                 stop: signal.Signals = signal.SIGINT) -> float:
    """Run ``cmd``; at ``budget`` seconds send it ``stop`` (SIGINT: modelcheck stops at
    the last complete level and reports; SIGTERM for TLC). Returns the wall seconds."""
    t0 = time.time()
    with open(stdout, "w") as out, open(stderr, "w") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err,
                                preexec_fn=_default_sigint)
        try:
            proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            proc.send_signal(stop)
            try:
                proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return time.time() - t0


def level_table(result: dict) -> list[dict]:
    """One row a level: depth, new states, distinct so far, growth ratio, seconds."""
    rows: list[dict] = []
    total, secs, prev = 0, 0.0, None
    for lv in result.get("levels", []):
        if lv["depth"] == 0:
            total += lv["frontier"]
            rows.append({"depth": 0, "new": lv["frontier"], "distinct": total,
                         "ratio": None, "seconds": 0.0})
            prev = lv["frontier"]
        new = lv["new"]
        total += new
        secs += lv["seconds"]
        if new:
            rows.append({"depth": lv["depth"] + 1, "new": new, "distinct": total,
                         "ratio": new / prev if prev else None, "seconds": secs})
        prev = new
    return rows


PROGRESS = re.compile(r"^\[\s*([\d.]+)s\] depth\s+(\d+)\s+distinct\s+([\d,]+)", re.M)


def levels_from_run(ckpt: pathlib.Path, stderr: str) -> list[dict]:
    """The levels of a run that ended without them in its report (a spec error, a
    second Ctrl-C): the states of each committed level from the checkpoint's manifest,
    the seconds from the progress lines (the first line at each depth)."""
    manifest = json.loads((ckpt / "manifest.json").read_text())
    counts = [lv["states"] for lv in manifest["levels"]]
    first: dict[int, float] = {}
    last = 0.0
    for m in PROGRESS.finditer(stderr):
        first.setdefault(int(m.group(2)), float(m.group(1)))
        last = float(m.group(1))
    first.setdefault(len(counts) - 1, last)  # the level being expanded at the end
    out = []
    for d in range(len(counts) - 1):
        secs = first.get(d + 1, 0.0) - first.get(d, first.get(d + 1, 0.0))
        out.append({"depth": d, "frontier": counts[d], "new": counts[d + 1],
                    "generated": 0, "seconds": max(secs, 0.0)})
    return out


def extrapolate(rows: list[dict], last: int = 6) -> dict | None:
    """Fit ``log(new) = a + b d + c d^2`` to the last ``last`` levels; with ``c < 0``
    (the ratio falls linearly) sum the fitted profile to where it drops below one state.
    Returns the predicted depth, total states and peak, or None without a peak."""
    pts = [(r["depth"], r["new"]) for r in rows if r["new"] > 0][-last:]
    if len(pts) < 4:
        return None
    d = np.array([p[0] for p in pts], dtype=float)
    y = np.log(np.array([p[1] for p in pts], dtype=float))
    c, b, a = np.polyfit(d, y, 2)
    if c >= 0:
        return None
    peak = -b / (2 * c)
    total = rows[-1]["distinct"]
    depth = int(d[-1])
    while True:
        depth += 1
        new = math.exp(a + b * depth + c * depth * depth)
        if new < 1 and depth > peak:
            break
        total += new
    return {"depth": depth - 1, "states": total, "peak_depth": peak,
            "peak_states": math.exp(a + b * peak + c * peak * peak), "c": c}


def backtest(result: dict) -> None:
    """The extrapolation from each prefix of a finished run's levels, against its
    true total: how far the method is off when it sees only the first levels."""
    rows = level_table(result)
    print(f"backtest against {rows[-1]['distinct']:,} states, depth {rows[-1]['depth']}:")
    print(f"{'levels to':>9} {'seen':>10} {'predicted':>12} {'depth':>5} {'error':>7}")
    for cut in range(4, len(rows)):
        ex = extrapolate(rows[:cut + 1])
        if ex is not None:
            err = ex["states"] / rows[-1]["distinct"] - 1
            print(f"{cut:>9} {rows[cut]['distinct']:>10,} {ex['states']:>12,.0f} "
                  f"{ex['depth']:>5} {err:>+7.0%}")


def print_levels(result: dict, wall: float | None) -> None:
    rows = level_table(result)
    print(f"status {result.get('status')} ({result.get('reason') or ''}); "
          f"{result.get('distinct_states', 0):,} distinct, depth {result.get('depth')}, "
          f"{result.get('seconds', 0):.0f} s" + (f" (wall {wall:.0f} s)" if wall else ""))
    if result.get("error"):
        print("error:", result["error"][:400])
    print(f"{'depth':>5} {'new':>12} {'distinct':>12} {'ratio':>6} {'seconds':>9}")
    for r in rows:
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
        print(f"{r['depth']:>5} {r['new']:>12,} {r['distinct']:>12,} {ratio:>6} "
              f"{r['seconds']:>9.1f}")
    mem = result.get("memory") or {}
    n = result.get("distinct_states") or 0
    rss = result.get("peak_rss_bytes")
    per_state = mem.get("bytes_per_state")  # stored: fingerprint and parent pointer
    if mem:
        print("memory (explorer):", ", ".join(
            f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in mem.items()))
    if rss:
        print(f"peak RSS {rss / 2**20:,.0f} MiB (mostly the batch arrays, not per state)")
    ex = extrapolate(rows)
    if ex is None:
        print("extrapolation: no peak in the last levels' growth (log-quadratic fit "
              "not concave); the total is beyond a fit of these levels")
        return
    rate = n / result["seconds"] if result.get("seconds") else 0
    print(f"extrapolation (log new = quadratic in depth, last 6 levels): peak "
          f"{ex['peak_states']:,.0f} states at depth {ex['peak_depth']:.1f}; "
          f"{ex['states']:,.0f} distinct states, depth {ex['depth']}"
          + (f"; {ex['states'] / rate / 3600:,.1f} h at this run's "
             f"{rate:,.0f} states/s" if rate else "")
          + (f"; {ex['states'] * per_state / 2**30:,.1f} GiB of stored states at "
             f"{per_state:,.0f} bytes each, besides the largest level's packed states"
             if per_state else ""))


TLC_PROGRESS = re.compile(
    r"Progress\((\d+)\) at [^:]+:\d+:\d+: ([\d,]+) states generated.*?"
    r"([\d,]+) distinct states found.*?, ([\d,]+) states left on queue")


def run_tlc(model: str, budget: float, run_dir: pathlib.Path) -> None:
    """TLC 2.20 on the author's cfg as published (VIEW view, its invariants), one worker,
    ``-deadlock``, for ``budget`` seconds; prints its progress lines' last figures."""
    if shutil.which("java") is None:
        print("TLC: no java on this machine")
        return
    folder, name, _ = MODELS[model]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp) / folder
        shutil.copytree(SHARED / "kafka-tlaplus" / folder, work)
        cmd = ["nice", "-n", "19", "java", "-XX:+UseParallelGC", "-Xmx4g",
               f"-DTLA-Library={SHARED / 'tlc' / 'modules'}",
               "-cp", str(SHARED / "tlc" / "tla2tools.jar"), "tlc2.TLC", "-workers", "1",
               "-deadlock", "-metadir", str(pathlib.Path(tmp) / "meta"),
               "-config", f"{name}.cfg", f"{name}.tla"]
        out = run_dir / f"tlc_{model}.txt"
        wall = run_budgeted(cmd, budget, work, out, run_dir / f"tlc_{model}.err",
                            signal.SIGTERM)
    text = out.read_text()
    print(f"TLC ({model}, {wall:.0f} s wall):")
    print_tlc_progress(text)


def print_tlc_progress(text: str) -> None:
    """TLC's progress lines (one a minute) and its final verdict, if any."""
    for m in TLC_PROGRESS.finditer(text):
        print(f"  depth {m.group(1):>3}  generated {m.group(2):>14}  distinct "
              f"{m.group(3):>12}  queue {m.group(4):>12}")
    done = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", text)
    if "depth of the complete state graph search" in text and done:
        print("  finished:", done.group(0))
    for line in text.splitlines():
        if "is violated" in line or line.startswith("Error"):
            print(" ", line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="v3.5")
    ap.add_argument("--budget", type=float, default=1200, help="wall seconds (default 1200)")
    ap.add_argument("--max-states", type=int, default=20_000_000)
    ap.add_argument("--backend", choices=("check", "workers", "spark"), default="check")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--run-dir", type=pathlib.Path, default=None,
                    help="checkpoint and outputs (default: a new temporary directory)")
    ap.add_argument("--resume", action="store_true", help="continue --run-dir's run")
    ap.add_argument("--const", action="append", default=[], metavar="K=V",
                    help="override a constant of the author's cfg (e.g. FenceBrokerLimit=0)")
    ap.add_argument("--tlc", action="store_true", help="also run TLC for the same budget")
    ap.add_argument("--no-modelcheck", action="store_true", help="only TLC")
    ap.add_argument("--from-json", type=pathlib.Path, help="print a saved result's table")
    ap.add_argument("--tlc-log", type=pathlib.Path, help="print a saved TLC output's progress")
    ap.add_argument("--backtest", action="store_true",
                    help="with --from-json of a finished run: the extrapolation from each "
                         "prefix of its levels against the true total")
    args = ap.parse_args()
    if args.tlc_log:
        print_tlc_progress(args.tlc_log.read_text())
        return
    if args.from_json:
        result = json.loads(args.from_json.read_text())
        print_levels(result, None)
        if args.backtest:
            backtest(result)
        return
    run_dir = args.run_dir or pathlib.Path(tempfile.mkdtemp(prefix="kafka_author_"))
    run_dir.mkdir(parents=True, exist_ok=True)
    if not args.no_modelcheck:
        cmd = command(args.model, args.backend, args.workers, run_dir, args.max_states,
                      args.resume, args.const)
        print("$", " ".join(cmd[3:]), flush=True)
        out = run_dir / f"result_{args.model}.json"
        wall = run_budgeted(cmd, args.budget, ROOT, out, run_dir / f"stderr_{args.model}.txt")
        try:
            result = json.loads(out.read_text())
        except json.JSONDecodeError:
            sys.exit(f"modelcheck printed no result; see {run_dir}/stderr_{args.model}.txt")
        if not result.get("levels") and (run_dir / "ckpt" / "manifest.json").exists():
            err = (run_dir / f"stderr_{args.model}.txt").read_text()
            result["levels"] = levels_from_run(run_dir / "ckpt", err)
            result["distinct_states"] = sum(lv["new"] for lv in result["levels"]) + 1
            result["seconds"] = sum(lv["seconds"] for lv in result["levels"])
        # the largest child's peak RSS (Linux: KiB); the workers' when there are any
        result["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        out.write_text(json.dumps(result, indent=1))
        print_levels(result, wall)
    if args.tlc:
        run_tlc(args.model, args.budget, run_dir)
    print(f"(run directory: {run_dir}; machine: {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
