"""Run records: the files ``modelcheck check --out DIR`` / ``--trace-out FILE`` write.

This module owns writing results to disk, atomically:

* ``DIR/result.json``: :meth:`Result.to_json` (status, counts, coverage, per-level
  stats, violation) plus ``format``/``format_version`` and a ``run`` object (tool
  and version, the command line, start and finish time in UTC, the spec's target,
  file and class, the options) and ``files`` (what else the folder holds);
* on a violation, ``DIR/trace.itf.json`` (ITF) and ``DIR/trace.json`` (our JSON
  trace), see :mod:`modelcheck.trace.model`;
* ``--trace-out FILE``: just the ITF trace.

Every file is written to a temporary file in the same directory, flushed and
renamed into place, so a reader never sees half a file. A run folder that already
holds a run is refused before exploring (and, against a concurrent writer, files
in it are created without replacing: an existing file makes the write fail
loudly instead of being clobbered). ``result.json`` is written last: a folder
with a ``result.json`` is complete.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import platform
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..result import Result
from ..spec import Spec
from .itf import dumps_itf
from .model import Trace, dumps_trace_json, trace_to_itf

if TYPE_CHECKING:
    import click

__all__ = [
    "RUN_FORMAT",
    "RESULT_FILE",
    "TRACE_ITF_FILE",
    "TRACE_JSON_FILE",
    "RunRecorder",
    "RunRecordError",
    "atomic_write",
    "command_line",
    "run_record",
    "write_trace_files",
]

RUN_FORMAT = "modelcheck-run"
RUN_FORMAT_VERSION = 1
RESULT_FILE = "result.json"
TRACE_ITF_FILE = "trace.itf.json"
TRACE_JSON_FILE = "trace.json"
_RUN_FILES = (RESULT_FILE, TRACE_ITF_FILE, TRACE_JSON_FILE)


from ..fileio import OutputPathError, atomic_write, prepare_dir, probe_file  # noqa: E402


class RunRecordError(UsageError):
    """A run folder or trace file cannot be written where asked."""




def command_line(ctx: click.Context | None) -> list[str]:
    """The command as the user could type it again, rebuilt from click's parsed params."""
    if ctx is None:
        return [os.path.basename(sys.argv[0]), *sys.argv[1:]]
    words = ctx.command_path.split()
    if words:
        words[0] = "modelcheck"
    opts: list[str] = []
    args: list[str] = []
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if param.param_type_name == "argument":
            if value is not None:
                args.extend(value if isinstance(value, (list, tuple)) else [str(value)])
            continue
        if value is None or value == param.default or value == () or value is False:
            continue
        flag = max(param.opts, key=len)
        if value is True:
            opts.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                opts.extend([flag, str(v)])
        else:
            opts.extend([flag, str(value)])
    return [*words, *args, *opts]


def _spec_info(target: str, spec: Spec | None) -> dict[str, Any]:
    info: dict[str, Any] = {"target": target}
    if spec is not None:
        cls = type(spec)
        info["class"] = cls.__name__
        info["module"] = cls.__module__
        try:
            src = inspect.getsourcefile(cls)
        except TypeError:  # pragma: no cover - builtin classes
            src = None
        if src:
            rel = os.path.relpath(src)
            info["file"] = src if rel.startswith("..") else rel
    return info


def run_record(result: Result, *, target: str, spec: Spec | None, command: list[str],
               started: datetime, finished: datetime, options: dict[str, Any] | None = None,
               files: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``result.json`` document: the result's JSON plus the run's metadata."""
    from .. import __version__

    doc: dict[str, Any] = {"format": RUN_FORMAT, "format_version": RUN_FORMAT_VERSION}
    doc.update(result.to_json())
    doc["run"] = {
        "tool": "modelcheck",
        "version": __version__,
        "command": shlex.join(command),
        "argv": list(command),
        "cwd": os.getcwd(),
        "started": _iso(started),
        "finished": _iso(finished),
        "spec": _spec_info(target, spec),
        "options": dict(options or {}),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
    doc["files"] = dict(files or {})
    return doc


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _generator() -> str:
    from .. import __version__

    return f"modelcheck {__version__}"


def write_trace_files(trace: Trace, *, itf_path: str | None = None, json_path: str | None = None,
                      overwrite: bool = True) -> list[str]:
    """Write ``trace`` as ITF and/or our JSON, atomically; returns the paths written."""
    written = []
    if itf_path is not None:
        atomic_write(itf_path, dumps_itf(trace_to_itf(trace, generator=_generator()))
                     .encode("utf-8"), overwrite=overwrite)
        written.append(itf_path)
    if json_path is not None:
        atomic_write(json_path, dumps_trace_json(trace).encode("utf-8"), overwrite=overwrite)
        written.append(json_path)
    return written


@dataclass
class RunRecorder:
    """Checks where a run will be written before it starts, and writes it afterwards."""

    target: str
    out_dir: str | None = None
    trace_out: str | None = None
    command: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))

    @classmethod
    def prepare(cls, target: str, *, out_dir: str | None, trace_out: str | None,
                ctx: click.Context | None = None,
                options: dict[str, Any] | None = None) -> RunRecorder:
        """Validate the destinations now, so a long run does not fail at the end.

        Raises :class:`RunRecordError` if ``out_dir`` already holds a run or is not
        a directory, if ``trace_out`` is anything but a regular file (a symbolic link,
        a FIFO, a device: never replaced), or if a destination's directory is missing
        or not writable.
        """
        if out_dir is not None:
            _probe(prepare_dir, out_dir, "--out", create=False)
            existing = [f for f in _RUN_FILES if os.path.lexists(os.path.join(out_dir, f))]
            if existing:
                raise RunRecordError(
                    f"--out {out_dir}: the folder already holds a run ({', '.join(existing)}); "
                    "run records are never overwritten. Choose a new folder or remove the "
                    "old run."
                )
        if trace_out is not None:
            _probe(probe_file, trace_out, "--trace-out")
        return cls(target, out_dir, trace_out, command_line(ctx), dict(options or {}))

    def write(self, result: Result, spec: Spec) -> list[str]:
        """Write the run record and/or trace; returns human-readable lines of what was
        written. Raises :class:`RunRecordError` when a file cannot be written."""
        finished = datetime.now(UTC)
        trace = None
        if result.violation is not None:
            trace = Trace.from_violation(spec, result.violation, source=self.target)
        notes: list[str] = []
        if self.out_dir is not None:
            what = f"--out {self.out_dir}"
            with _writing(what):
                os.makedirs(self.out_dir, exist_ok=True)
                files = {"result": RESULT_FILE}
                if trace is not None:
                    write_trace_files(trace, itf_path=os.path.join(self.out_dir, TRACE_ITF_FILE),
                                      json_path=os.path.join(self.out_dir, TRACE_JSON_FILE),
                                      overwrite=False)
                    files.update(trace_itf=TRACE_ITF_FILE, trace_json=TRACE_JSON_FILE)
                doc = run_record(result, target=self.target, spec=spec, command=self.command,
                                 started=self.started, finished=finished, options=self.options,
                                 files=files)
                atomic_write(os.path.join(self.out_dir, RESULT_FILE),
                             (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("utf-8"),
                             overwrite=False)
            notes.append(f"Run record written to {self.out_dir}/ "
                         f"({', '.join(files.values())}).")
        if self.trace_out is not None:
            if trace is None:
                notes.append(f"No counterexample: {self.trace_out} not written.")
            else:
                with _writing(f"--trace-out {self.trace_out}"):
                    write_trace_files(trace, itf_path=self.trace_out)
                notes.append(f"Counterexample written to {self.trace_out} (ITF, "
                             f"{len(trace)} states).")
        return notes


def _probe(check: Any, path: str, option: str, **kw: Any) -> None:
    try:
        check(path, option, **kw)
    except OutputPathError as e:
        raise RunRecordError(str(e)) from None


@contextlib.contextmanager
def _writing(what: str) -> Iterator[None]:
    """Report a failed write as a :class:`RunRecordError` naming the user's path
    (``what``), never a temporary file."""
    try:
        yield
    except FileExistsError as e:
        name = os.path.basename(e.filename or "") or str(e)
        raise RunRecordError(f"{what}: {name} appeared while the check ran (another run "
                             "writing to the same folder?); not overwritten.") from None
    except OSError as e:
        raise RunRecordError(f"{what}: cannot write the run record: "
                             f"{e.strerror or e}.") from None
