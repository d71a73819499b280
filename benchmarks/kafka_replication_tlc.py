"""TLC and modelcheck on the Kafka replication cfgs of ``tests/kafka_replication/``.

Runs TLC 2.20 (``../shared/tlc``, one worker, no deadlock check, the cfg as committed:
no VIEW) on each cfg against the public TLA+ model (``../shared/kafka-tlaplus``), runs
modelcheck on the port with the cfg's constants, and prints the comparison table
(distinct states, depth as TLC prints it, the violated invariant and the trace length).
Without Java it prints modelcheck's side and the committed TLC figures
(``tlc_figures.json``). ``--update`` rewrites that file with the figures TLC printed.
``--view`` does the same for the cfgs of ``tests/kafka_replication/view/`` (the author's
``VIEW view`` line added; ``KafkaReplicationView`` / ``KafkaReplicationKip966View`` on
our side; figures in ``tests/kafka_replication/view/tlc_view_figures.json``).

    python benchmarks/kafka_replication_tlc.py [--view] [--only NAME ...] [--update]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from modelcheck import explore  # noqa: E402
from modelcheck.result import Status  # noqa: E402
from specs.kafka_replication import (  # noqa: E402
    KafkaReplication,
    KafkaReplicationKip966,
    KafkaReplicationKip966Live,
    KafkaReplicationKip966View,
    KafkaReplicationLive,
    KafkaReplicationView,
    constants_from_cfg,
    invariants_from_cfg,
)

HERE = ROOT / "tests" / "kafka_replication"
#: ../shared beside the checkout (found upwards, so that a worktree nested deeper finds it too)
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared").is_dir()),
              ROOT.parent / "shared")
MODELS = {"v3.5": ("v3.5", "kafka_replication_v3_5.tla", KafkaReplication),
          "kip-966": ("kip-966", "kafka_replication_kip_966.tla", KafkaReplicationKip966)}


def model_of(name: str) -> str:
    """The model a cfg is for, by its name: ``v35_*`` v3.5, ``kip_*`` KIP-966."""
    return "kip-966" if name.startswith("kip_") else "v3.5"


def run_tlc(model: str, cfg: pathlib.Path) -> dict:
    folder, tla, _ = MODELS[model]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp) / folder
        shutil.copytree(SHARED / "kafka-tlaplus" / folder, work)
        shutil.copy(cfg, work / cfg.name)
        cmd = ["java", "-XX:+UseParallelGC", "-Xmx4g",
               f"-DTLA-Library={SHARED / 'tlc' / 'modules'}",
               "-cp", str(SHARED / "tlc" / "tla2tools.jar"), "tlc2.TLC", "-workers", "1",
               "-deadlock", "-metadir", str(pathlib.Path(tmp) / "meta"),
               "-config", cfg.name, tla]
        t0 = time.time()
        out = subprocess.run(cmd, cwd=work, capture_output=True, text=True).stdout
        secs = time.time() - t0
    fig: dict = {"model": model, "seconds": round(secs, 1)}
    m = re.search(r"Invariant (\w+) is violated", out)
    if m:
        fig["violated"] = m.group(1)
        states = re.findall(r"^State \d+: <(\w+)", out, re.M)
        fig["trace_length"] = len(states)
        fig["trace"] = states[1:]
        return fig
    g = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out)
    d = re.search(r"depth of the complete state graph search is (\d+)", out)
    if not (g and d):
        raise SystemExit(f"TLC did not finish on {cfg.name}:\n{out[-2000:]}")
    fig.update(generated=int(g.group(1).replace(",", "")),
               distinct=int(g.group(2).replace(",", "")), depth=int(d.group(1)),
               violated=None)
    return fig


LIVE = HERE / "liveness"


def liveness_properties(cfg_text: str) -> list[str]:
    """The names under a liveness cfg's ``PROPERTY`` keyword."""
    return cfg_text.split("PROPERTY", 1)[1].split()


def run_tlc_liveness(model: str, cfg: pathlib.Path, drop: str | None) -> dict[str, str]:
    """TLC's verdict on each ``PROPERTY`` of a liveness cfg (one run per property), on
    the model's ``LivenessSpec``; with ``drop``, the source's ``Liveness`` without the
    line ``WF_vars(<drop>(b))``."""
    folder, tla, _ = MODELS[model]
    text = cfg.read_text()
    head = text.split("PROPERTY", 1)[0]
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp) / folder
        shutil.copytree(SHARED / "kafka-tlaplus" / folder, work)
        if drop:
            src = (work / tla).read_text()
            line = next(x for x in src.splitlines() if f"WF_vars({drop}(b))" in x)
            (work / tla).write_text(src.replace(line + "\n", ""))
        for prop in liveness_properties(text):
            (work / "live.cfg").write_text(f"{head}PROPERTY\n{prop}\n")
            cmd = ["java", "-XX:+UseParallelGC", "-Xmx4g",
                   f"-DTLA-Library={SHARED / 'tlc' / 'modules'}",
                   "-cp", str(SHARED / "tlc" / "tla2tools.jar"), "tlc2.TLC", "-workers",
                   "1", "-deadlock", "-metadir", str(pathlib.Path(tmp) / "meta"),
                   "-config", "live.cfg", tla]
            res = subprocess.run(cmd, cwd=work, capture_output=True, text=True).stdout
            if "Temporal properties were violated" in res:
                out[prop] = "violated"
            elif "No error has been found" in res:
                out[prop] = "holds"
            else:
                raise SystemExit(f"TLC did not finish on {cfg.name} ({prop}):\n{res[-2000:]}")
    return out


def run_ours_liveness(model: str, cfg: pathlib.Path, drop: str | None) -> dict[str, str]:
    """modelcheck's verdict on the same properties: a TLA+ property quantified over
    brokers or values (``EventuallyRuns``) holds iff each of its instances
    (``EventuallyRuns1``, ...) holds."""
    from modelcheck import check_liveness
    cls = KafkaReplicationKip966Live if model == "kip-966" else KafkaReplicationLive
    if drop:
        cls = type(f"{cls.__name__}Without{drop}Fairness", (cls,), {
            "fair_actions": tuple(a for a in cls.fair_actions if a != drop),
            "__module__": cls.__module__})
    spec = cls(**constants_from_cfg(cfg.read_text()))
    r = check_liveness(spec, temporal=spec.temporal, invariants=[])
    verdicts = r.liveness["properties"]
    return {prop: ("violated" if any(v == "violated" for k, v in verdicts.items()
                                     if k.rstrip("0123456789") == prop) else "holds")
            for prop in liveness_properties(cfg.read_text())}


VIEWS = {"v3.5": KafkaReplicationView, "kip-966": KafkaReplicationKip966View}


def run_ours(model: str, cfg: pathlib.Path, view: bool = False) -> dict:
    cls = VIEWS[model] if view else MODELS[model][2]
    spec = cls(**constants_from_cfg(cfg.read_text()))
    t0 = time.time()
    r = explore(spec, invariants=invariants_from_cfg(cfg.read_text()))
    out: dict = {"seconds": round(time.time() - t0, 1)}
    if r.status is Status.VIOLATION:
        out.update(violated=r.violation.property, trace_length=len(r.violation.trace))
    else:
        out.update(distinct=r.distinct_states, depth=r.depth + 1, violated=None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="cfg names (default: all)")
    ap.add_argument("--update", action="store_true", help="rewrite tlc_figures.json")
    ap.add_argument("--view", action="store_true",
                    help="the cfgs with VIEW view and their figures "
                         "(tests/kafka_replication/view/tlc_view_figures.json)")
    args = ap.parse_args()
    folder = HERE / "view" if args.view else HERE
    fig_file = folder / ("tlc_view_figures.json" if args.view else "tlc_figures.json")
    figures = json.loads(fig_file.read_text())
    java = shutil.which("java") is not None
    names = args.only or sorted(k for k in figures if not k.startswith("_"))
    print(f"{'cfg':18} {'TLC distinct':>12} {'depth':>5} {'ours':>12} {'depth':>5} "
          f"{'TLC s':>6} {'ours s':>6}  verdict")
    for name in names:
        cfg = folder / f"{name}.cfg"
        model = model_of(name)
        tlc = run_tlc(model, cfg) if java else {**figures[name], "seconds": None}
        if java and args.update:
            figures[name] = {k: v for k, v in tlc.items() if k != "seconds"}
        ours = run_ours(model, cfg, view=args.view)
        if tlc["violated"]:
            same = (ours["violated"], ours.get("trace_length")) == (tlc["violated"],
                                                                    tlc["trace_length"])
            print(f"{name:18} {tlc['violated']} in {tlc['trace_length']} states; ours "
                  f"{ours['violated']} in {ours.get('trace_length')}  "
                  f"{'equal' if same else 'DIFFERENT'}")
            continue
        same = (ours.get("distinct"), ours.get("depth")) == (tlc["distinct"], tlc["depth"])
        print(f"{name:18} {tlc['distinct']:>12,} {tlc['depth']:>5} "
              f"{ours.get('distinct', 0):>12,} {ours.get('depth', 0):>5} "
              f"{tlc['seconds'] if tlc['seconds'] is not None else '-':>6} "
              f"{ours['seconds']:>6}  {'equal' if same else 'DIFFERENT'}")
    if java and args.update:
        fig_file.write_text(json.dumps(figures, indent=1) + "\n")
    if args.only or args.view:
        return
    live = json.loads((LIVE / "tlc_liveness.json").read_text())
    print(f"\n{'liveness cfg':22} {'fairness':28} verdicts (TLC; ours)")
    for _key, fig in sorted((k, v) for k, v in live.items() if not k.startswith("_")):
        cfg = LIVE / f"{fig['cfg']}.cfg"
        model = model_of(fig["cfg"])
        tlc = run_tlc_liveness(model, cfg, fig["drop"]) if java else fig["verdicts"]
        if java and args.update:
            fig["verdicts"] = tlc
        ours = run_ours_liveness(model, cfg, fig["drop"])
        bad = sorted(p for p, v in tlc.items() if v == "violated")
        print(f"{fig['cfg']:22} {'without WF(' + fig['drop'] + ')' if fig['drop'] else 'all':28} "
              f"violated: {', '.join(bad) or 'none'}  {'equal' if ours == tlc else 'DIFFERENT'}")
    if java and args.update:
        (LIVE / "tlc_liveness.json").write_text(json.dumps(live, indent=1) + "\n")


if __name__ == "__main__":
    main()
