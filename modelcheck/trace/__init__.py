"""Counterexample traces: the model, the files, the text, replay and evaluation.

* :mod:`.model`: the :class:`Trace` model, its errors, our JSON format and the loaders
  (:func:`load_trace` reads ITF, our JSON or a run record);
* :mod:`.itf`: the strict codec of ITF, the Informal Trace Format of Apalache/Quint;
* :mod:`.render`: traces as text (values, action labels, ``trace show``);
* :mod:`.evaluate`: ``trace eval``, a Python expression over every state;
* :mod:`.replay`: ``trace replay``, checking a trace against a spec, explained by
  :mod:`.conjuncts` (the guard conjuncts of an action that is not enabled);
* :mod:`.runrecord`: the run folder and trace files ``check --out/--trace-out`` write.

This package sits between the command line (:mod:`modelcheck.cli`,
:mod:`modelcheck.cli_trace`) and the engine; the engine never imports it.
"""

from .itf import ItfError, ItfTrace
from .model import (
    ITF_FORMAT_DESCRIPTION,
    TRACE_JSON_FORMAT,
    Trace,
    TraceFileError,
    TraceMismatchError,
    dumps_trace_json,
    index_key,
    load_trace,
    loads_trace,
    trace_from_document,
    trace_from_itf,
    trace_from_json,
    trace_to_itf,
    trace_to_json,
    value_sort_key,
)

__all__ = [
    "Trace",
    "TraceFileError",
    "TraceMismatchError",
    "ItfTrace",
    "ItfError",
    "TRACE_JSON_FORMAT",
    "ITF_FORMAT_DESCRIPTION",
    "loads_trace",
    "load_trace",
    "trace_from_document",
    "trace_to_itf",
    "trace_from_itf",
    "trace_to_json",
    "trace_from_json",
    "dumps_trace_json",
    "index_key",
    "value_sort_key",
]
