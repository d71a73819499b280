"""The KRaft broker spec with a liveness property, for the liveness benchmarks
(benchmarks/liveness_bench.py, benchmarks/workers_bench.py ``L5live``): weak fairness
on Replay, and ``ReplayCatchesUp``: a running broker behind the log catches up (or goes
offline)."""

from __future__ import annotations

from typing import Any

from modelcheck import leads_to
from specs.kraft_broker import OFFLINE, KRaftBroker


class KRaftBrokerLive(KRaftBroker):
    fairness = {"Replay": "weak"}

    @leads_to
    def ReplayCatchesUp(self, s: Any) -> Any:
        return ((s.offset[1] < s.logEnd) & (s.bstate[1] != OFFLINE),
                (s.offset[1] == s.logEnd) | (s.bstate[1] == OFFLINE))
