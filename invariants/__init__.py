"""Reusable invariants, action properties and temporal properties, usable from any spec
and by name from the CLI.

Each entry is a factory returning a predicate bound to variable names (with
defaults that follow the KRaft specs). Put one in a spec as a class attribute::

    class MySpec(Spec):
        EpochMonotonic = epoch_monotonic("regEpoch")

or check one on any spec from the command line: ``modelcheck check SPEC
--invariant EpochMonotonic`` (the spec's own predicates take precedence).
"""

from __future__ import annotations

from collections.abc import Callable

from modelcheck.spec import PredicateDecl

from .controller import (
    committed_not_lost,
    controller_epoch_grows,
    isr_holds_committed,
    leader_in_isr,
    metadata_epoch_monotonic,
    no_stale_controller_effect,
    one_leader_per_epoch,
    unique_controller_epoch,
)
from .controller_liveness import (
    controller_eventually_elected,
    partition_eventually_led,
    replicas_converge,
    zombie_eventually_resigns,
)
from .epochs import epoch_monotonic, unique_epochs
from .fencing import caught_up_before_unfence, running_holds_epoch, shutdown_leads_nothing
from .lifecycle import (
    controlled_shutdown_safe,
    fenced_not_in_isr,
    fenced_not_leader,
    leader_epoch_monotonic,
    no_stale_request_effect,
    no_superseded_registration,
    registered_incarnation_holds_epoch,
    single_live_registration,
)
from .liveness import (
    controlled_shutdown_completes,
    dead_broker_eventually_fenced,
    eventually_stays_unfenced,
    eventually_unfenced,
    registration_resolves,
)
from .metadata import (
    aborted_never_visible,
    agreement,
    catch_up_before_publish,
    image_monotonic,
    loader_never_faults,
    published_is_committed_prefix,
    reader_sees_one_image,
)

__all__ = [
    "epoch_monotonic",
    "unique_epochs",
    "caught_up_before_unfence",
    "shutdown_leads_nothing",
    "running_holds_epoch",
    "fenced_not_leader",
    "fenced_not_in_isr",
    "leader_epoch_monotonic",
    "no_stale_request_effect",
    "no_superseded_registration",
    "controlled_shutdown_safe",
    "single_live_registration",
    "registered_incarnation_holds_epoch",
    "unique_controller_epoch",
    "controller_epoch_grows",
    "no_stale_controller_effect",
    "metadata_epoch_monotonic",
    "one_leader_per_epoch",
    "leader_in_isr",
    "isr_holds_committed",
    "committed_not_lost",
    "eventually_unfenced",
    "controlled_shutdown_completes",
    "registration_resolves",
    "dead_broker_eventually_fenced",
    "eventually_stays_unfenced",
    "published_is_committed_prefix",
    "aborted_never_visible",
    "catch_up_before_publish",
    "image_monotonic",
    "agreement",
    "loader_never_faults",
    "reader_sees_one_image",
    "controller_eventually_elected",
    "zombie_eventually_resigns",
    "partition_eventually_led",
    "replicas_converge",
    "catalog",
    "lookup",
]

_CATALOG: dict[str, Callable[[], PredicateDecl]] = {
    "EpochMonotonic": epoch_monotonic,
    "UniqueEpochs": unique_epochs,
    "CaughtUpBeforeUnfence": caught_up_before_unfence,
    "ShutdownLeadsNothing": shutdown_leads_nothing,
    "RunningHoldsCurrentEpoch": running_holds_epoch,
    "FencedNotLeader": fenced_not_leader,
    "FencedNotInIsr": fenced_not_in_isr,
    "LeaderEpochMonotonic": leader_epoch_monotonic,
    "NoStaleRequestEffect": no_stale_request_effect,
    "NoSupersededRegistration": no_superseded_registration,
    "ControlledShutdownSafe": controlled_shutdown_safe,
    "SingleLiveRegistration": single_live_registration,
    "RegisteredIncarnationHoldsEpoch": registered_incarnation_holds_epoch,
    "UniqueControllerEpoch": unique_controller_epoch,
    "ControllerEpochGrows": controller_epoch_grows,
    "NoStaleControllerEffect": no_stale_controller_effect,
    "MetadataEpochMonotonic": metadata_epoch_monotonic,
    "OneLeaderPerEpoch": one_leader_per_epoch,
    "LeaderInIsr": leader_in_isr,
    "IsrHoldsCommitted": isr_holds_committed,
    "CommittedNotLost": committed_not_lost,
    # temporal properties (leads-to and <>[], about broker 1): checked by the liveness checker
    "EventuallyUnfenced": eventually_unfenced,
    "ControlledShutdownCompletes": controlled_shutdown_completes,
    "RegistrationResolves": registration_resolves,
    "DeadBrokerEventuallyFenced": dead_broker_eventually_fenced,
    "EventuallyStaysUnfenced": eventually_stays_unfenced,
    "PublishedIsCommittedPrefix": published_is_committed_prefix,
    "AbortedNeverVisible": aborted_never_visible,
    "CatchUpBeforePublish": catch_up_before_publish,
    "ImageMonotonic": image_monotonic,
    "Agreement": agreement,
    "LoaderNeverFaults": loader_never_faults,
    "ReaderSeesOneImage": reader_sees_one_image,
    # the ZooKeeper-era controller's (leads-to about broker 1 / partition 1, and <>[])
    "ControllerEventuallyElected": controller_eventually_elected,
    "ZombieEventuallyResigns": zombie_eventually_resigns,
    "PartitionEventuallyLed": partition_eventually_led,
    "ReplicasConverge": replicas_converge,
}


def catalog() -> list[str]:
    """Names of the library predicates checkable with ``--invariant NAME``."""
    return sorted(_CATALOG)


def lookup(name: str) -> PredicateDecl | None:
    """The library predicate of that name with its default variable names, or None."""
    factory = _CATALOG.get(name)
    return factory() if factory is not None else None
