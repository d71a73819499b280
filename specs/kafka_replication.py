"""Kafka data replication with the KRaft controller (Kafka 3.5): the public TLA+ model, ported.

Source: Jack Vanlightly's TLA+ study of Kafka's replication protocol (MIT licence,
Copyright (c) 2023 Jack Vanlightly; the licence text is in
``../shared/kafka-tlaplus/LICENSE``), folder ``v3.5/``: ``kafka_replication_v3_5.tla``
(the actions), ``v3_5_functions.tla`` (shared formulae), ``v3_5_properties.tla``
(invariants and liveness), ``v3_5_types.tla``, ``network.tla`` and
``kafka_replication_v3_5.cfg``; the prose is ``v3.5/description/`` (cited below as
"ch. N"). This is the model of one partition replicated over ``BrokerCount`` brokers
with the KRaft controller abstracted to a state machine: registration, fencing,
leader election, the ISR and AlterPartition, the metadata log, fetch, log truncation
on divergence, the high watermark, reassignment, clean and unclean shutdown. Its
known flaw, *Last Replica Standing* (ch. 7), is reached on :data:`LRS_CONSTANTS`.

Actions (TLA+ name -> Python action; the prose chapter)
-------------------------------------------------------
* ``BrokerStart(b)`` -> ``BrokerStart(b)`` (ch. 8, broker lifecycle)
* ``ReceiveBrokerRegRequest(b)`` -> ``ReceiveBrokerRegRequest(b, k, c)`` (ch. 8)
* ``ReceiveBrokerRegResponse(b)`` -> ``ReceiveBrokerRegResponse(b, k)`` (ch. 8)
* ``UnfenceBroker(b)`` / ``FenceBroker(b)`` -> ``UnfenceBroker(b, c)`` /
  ``FenceBroker(b, c)`` (ch. 8; leader election on a broker change, ch. 2)
* ``ReceiveMetadataUpdate(b)`` -> ``ReceiveMetadataUpdate(b, o)`` with its six
  sub-actions (RemainLeader, BecomeLeaderInNewEpoch, RemainFollower,
  BecomeFollowerInNewEpoch, WaitForLeaderChange, DeletePartition) as one action
  (ch. 2, "metadata log replication")
* ``SendAlterPartitionRequest(b)`` -> ``SendAlterPartitionRequest(b, to)``;
  ``ReceiveAlterPartitionRequest(b)`` -> ``ReceiveAlterPartitionRequest(b, k, nl)``;
  ``ReceiveAlterPartitionResponse(b)`` -> ``ReceiveAlterPartitionResponse(b, k)``
  (ch. 2, the ISR and the maximal ISR; ch. 4 for the reassignment completion)
* ``PerformPartitionReassignment`` -> ``PerformPartitionReassignment(add, rem, nl)``
  (ch. 4)
* ``SendFetchRequest(b)`` -> ``SendFetchRequest(b, to)``; ``ReceiveFetchRequest(b)``
  -> ``ReceiveFetchRequest(b, k, src)``; ``ReceiveFetchResponse(b)`` ->
  ``ReceiveFetchResponse(b, k, src)`` (ch. 2 fetch and the high watermark; ch. 3 log
  divergence and truncation, ``LastOffsetForEpoch``)
* ``WriteRecordToLeader(b)`` -> ``WriteRecordToLeader(b, v)`` (ch. 2)
* ``UncleanShutdown(b)`` / ``CleanShutdown(b)`` -> ``UncleanShutdown(b, c)`` /
  ``CleanShutdown(b, c)`` (ch. 5 recovery; ch. 7 Last Replica Standing)

The extra parameters are TLA+'s existential witnesses made explicit: ``k`` is the
slot of the message (``\\E m \\in Messages``), ``src`` its source (so that the
replica state of the sender is indexed by a constant), ``o`` the metadata offset,
``c`` / ``nl`` the leader candidate the controller picks
(``\\E candidate \\in new_isr``), ``to`` the timed-out ISR subset (a bit mask),
``add`` / ``rem`` the reassignment's sets (bit masks), ``v`` the value. A witness
that the TLA+ formula does not use (the candidate when the CASE arm takes none) is
pinned to 1, so every TLA+ successor is generated once per witness, as TLC does.

Properties (``v3_5_properties.tla`` -> Python; ch. 6, replication correctness)
------------------------------------------------------------------------------
``LeaderCompletenessProperty``, ``LeaderCandidateCompletenessProperty``,
``ReplicationQuorumSupersetProperty``, ``LogMatchingProperty``,
``MetadataLogMatchingProperty``, ``ConsistentReadProperty``,
``NoCommittedRecordLostGlobally``: the same names, invariants. The spec-bug
invariants ``ValidBrokerState``, ``ValidReplicaState``, ``ValidFetcherState``,
``ValidControllerState`` are ported too (not in the author's cfg, checked here as
well). ``TypeOK`` is the variables' declared types (storing a value outside them is a spec error).

Limiting constants (``v3_5_types.tla``): ``BrokerCount``, ``InitReplicationFactor``,
``NValues`` (``Values = {1..NValues}``; the cfg's ``{A}`` is ``NValues = 1``),
``MinISR``, ``InitIsrSize``, ``CleanShutdownLimit``, ``UncleanShutdownLimit``,
``FenceBrokerLimit``, ``LeaderShrinkIsrLimit``, ``ReassignmentLimit``,
``AvoidLastReplicaStanding``. The type bounds ``MaxEpoch`` (epochs, incarnations,
broker epochs), ``MaxMetadataLog`` (the metadata log), ``MsgCap`` and ``DiscardCap``
(messages per kind in flight / processed) are not in the TLA+ model (its types are
``Nat``): a run that needs more stops with a spec error naming the variable, never
drops a value.

Translation (TLA+ construct -> modelcheck form)
-----------------------------------------------
* Model values (statuses, roles, error codes) are ``IntEnum`` members; ``Nil`` and
  ``NoLeader`` in an id field are ``Ref(..., none=0)``; ``Nil`` offsets
  (``partition_leso``, a peer's ``leo``) are 0 (offsets are 1-based, so 0 is free);
  ``aux_flo``'s ``IntMax`` is 0 (read through :meth:`_flo`).
* A ``Nil`` fetcher partition is ``has = FALSE`` with the other fields at zero; a
  ``Nil`` pending AlterPartition request is ``has = FALSE`` with a zero request. Both
  are one-to-one with the TLA+ values, so distinct states are counted as TLC does.
* ``messages`` and ``messages_discard`` (sets of records of six shapes) are six
  sorted, duplicate-free ``Seq`` variables each (``m_*`` and ``d_*``): a ``SetOf`` a
  record allows at most 4,096 element values and an AlterPartition response holds
  its whole request (ISR, per-member broker epochs, epochs), far more. A sequence
  kept sorted by the record's index in its type (``type.index_of``) is one-to-one
  with the set (:func:`_sadd`, :func:`_sdel`, :func:`_sfilter`, :func:`_sunion`, each
  computed on every slot at once, one matrix per cell). ``isr_and_epochs``
  (a function on the proposed ISR) is ``epochs``, a sequence of ``BrokerCount``
  epochs, 0 outside the ISR. The field ``type`` of a record (an attribute of a record
  value) is the variable's kind.
* The initial metadata record has no ``adding``/``removing`` fields in TLA+; here it
  has them empty. It is only ever at offset 1, so states correspond one to one.
* ``CHOOSE`` over a log's offsets picks the smallest satisfying offset (TLC's order on
  ``1..n``); ``CASE`` takes the first true arm, as TLC evaluates it.
* ``VIEW view`` (the author's cfg) is :data:`VIEW`, declared by
  :class:`KafkaReplicationView` and :class:`KafkaReplicationKip966View` (``docs/view.md``):
  every variable but ``messages_discard`` (the ``d_*``) and the ``aux_*``. The other
  classes have no view: their states are TLC's states without a VIEW. With it TLC and
  modelcheck count fewer distinct states (two states differing only in those are
  one), see ``tests/kafka_replication/README.md``.

Known divergence from TLC: where TLC stops with an evaluation error (a record
``LogEntry`` read past the end of the log in ``WriteRecordToLeader`` when a sole-ISR
leader commits on write, possible only with ``NValues >= 2`` and ``MinISR = 1``),
this port reads the type's zero value. The committed configurations avoid it.

Bug variants (the source's ``CHECK`` comments: a check commented out to confirm a
counterexample): see the classes ``KafkaReplicationBug*`` at the end of the module.

KIP-966, Eligible Leader Replicas (:class:`KafkaReplicationKip966`)
-------------------------------------------------------------------
Folder ``kip-966/`` of the same study: ``kafka_replication_kip_966.tla``,
``kip_966_functions.tla``, ``kip_966_properties.tla``, ``kip_966_types.tla``; its prose
is ``kip-966/description/`` (ch. 2 the ISR and the ELR in the replication algorithm,
ch. 5 recovery: unclean exclusion, the ELR cases A-G, the broker epoch written to disk
by a controlled shutdown; ch. 6 replication correctness). The actions and properties
above are shared; what differs (the source's "PROPOSAL CHANGE" blocks):

* The metadata record has ``elr`` and ``last_known_elr`` (``MdRecK``);
  ``ApplyPartitionChange(..., new_elr, ...)`` -> ``_apply_change(..., elr)`` with
  ``_elr_fields`` (the last known ELR: empty when the ISR reaches MinISR, else it
  gains the ELR members dropped from the ELR but still replicas);
  ``UpdateElrOnIsrOrReplicaChange`` / ``UpdateElr`` -> ``_update_elr``;
  ``RemoveBrokerFromISR`` may empty the ISR.
* ``MaybeUpdatePartitionOnBrokerChange(new_isr, new_elr, new_unfenced)`` ->
  ``_broker_change_elr`` (``NoLeaderChange`` with the ELR; elect from a non-empty ISR,
  else from the unfenced ELR, moving the candidate to the ISR, else no leader);
  ``HandleBrokerFenced`` / ``HandleBrokerUnfenced`` -> ``_fenced`` / ``_unfenced``.
* ``BrokerStart(b)`` -> ``BrokerStart(b)``: the broker keeps the broker epoch on file
  and sends it in its registration (``RegReqK``). ``ReceiveBrokerRegRequest(b)`` ->
  ``ReceiveBrokerRegRequest(b, k, c)``: a request with broker epoch 0 is an unclean
  broker, ``ProcessUncleanBroker(b)`` (out of the ISR and the ELR), else
  ``HandleBrokerUnfenced(b)`` (ch. 5).
* ``ReceiveAlterPartitionRequest(b)`` and ``PerformPartitionReassignment`` update the
  ELR (``_ap_elr``, ``_reassign_elr``; ch. 4, ch. 5).
* ``CanAdvanceHwm`` / ``SafeToAdvanceHwm``: the high watermark advances only while the
  leader's ISR has at least MinISR members (``_safe_hwm``, in ``ReceiveFetchRequest``,
  ``WriteRecordToLeader`` and on a partition change; ch. 5, the ELR cases).
* ``DataLossShutdown(b)`` -> ``DataLossShutdown(b, c)`` (v3.5's unclean shutdown, no
  Last Replica Standing guard); ``NoDataLossShutdown(b)`` -> ``NoDataLossShutdown(b,
  c, clean)``, ``clean`` the ``\\E is_clean_shutdown \\in BOOLEAN`` witness (a clean
  shutdown writes the broker epoch to file; ch. 5). The counters
  ``data_loss_shutdown_ctr`` / ``no_data_loss_shutdown_ctr`` are ``aux_ctrs``'
  ``unclean_shutdown_ctr`` / ``clean_shutdown_ctr``; the limits are the constants
  ``DataLossShutdownLimit`` / ``NoDataLossShutdownLimit``.
* Properties (``kip_966_properties.tla``): ``LeaderCandidateCompletenessProperty``
  (ISR and ELR members), ``ReplicationQuorumSupersetProperty`` (the maximal ISR covers
  the controller's ISR and ELR while the leader's ISR has MinISR members),
  ``ValidControllerState`` (no fenced ISR member, the ISR may be empty), and new:
  ``MinIsrRecoveryQuorum`` (with ISR and ELR empty, the last known ELR has MinISR
  members) and ``ValidControllerIsrAndElr``.
* The ten ``CHECK`` comments are the same checks at other lines: ``KIP966_CHECKS``,
  the classes ``Kip966Bug*``.

Liveness (``*_properties.tla``, "LIVENESS"; both versions, ch. 2, ch. 8)
------------------------------------------------------------------------
:class:`KafkaReplicationLive` and :class:`KafkaReplicationKip966Live` are the models'
``LivenessSpec``: the safety classes with the fairness and the temporal properties
(kept out of the safety classes, whose big configurations need no state graph). The
fairness is the models' ``Liveness``: ``\\A b: WF_vars(A(b))`` for the actions of
``fair_actions`` (BrokerStart, ReceiveBrokerRegResponse, ReceiveMetadataUpdate,
SendAlterPartitionRequest, ReceiveAlterPartitionResponse, SendFetchRequest,
ReceiveFetchRequest, ReceiveFetchResponse, ReceiveBrokerRegRequest,
ReceiveAlterPartitionRequest, UnfenceBroker); the witnesses of ``A(b)`` are inside
TLA+'s action, so each ``(A, b)`` is one weakly fair family (the ``fairness`` method).
The perturbations (writes, shutdowns, fencing, reassignment) are not fair. The
properties, each TLA+ ``\\A b`` / ``\\A v`` one as one property per broker (1-3) or
value (1-2), trivially true beyond ``BrokerCount`` / ``NValues``:

* ``EventuallyRuns`` -> ``EventuallyRuns1``, ``EventuallyRuns2``, ``EventuallyRuns3``
  (``STARTING ~> RUNNING /\\ UNFENCED``)
* ``EventuallyUnfenced`` -> ``EventuallyUnfenced1``, ``EventuallyUnfenced2``,
  ``EventuallyUnfenced3``
* ``EventuallyWriteIsAcceptedOrRejected`` -> ``EventuallyWriteIsAcceptedOrRejected1``,
  ``EventuallyWriteIsAcceptedOrRejected2``
* ``EventuallyAcknowledgedValueFullyReplicated`` ->
  ``EventuallyAcknowledgedValueFullyReplicated1``,
  ``EventuallyAcknowledgedValueFullyReplicated2``
* ``EventuallyMetadataConverges`` -> ``EventuallyMetadataConverges`` (``[]<>``)
* ``EventuallyReassignmentCompletes`` -> ``EventuallyReassignmentCompletes``: the
  source's bulleted ``\\/ adding # {} \\/ removing # {} ~> done`` parses as
  ``adding # {} \\/ (removing # {} ~> done)``, the first disjunct a state predicate of
  the initial state (always false: no reassignment at the start), so it is
  ``removing # {} ~> adding = {} /\\ removing = {}``, as TLC checks it.

Not ported: ``AlterPartitionEpochEventuallyReachedOrZero`` (``[]<>(\\A b: P ~> Q)``, a
``~>`` nested under ``[]<>``, which modelcheck's temporal forms do not express; the
author's cfgs do not list it either).

Where v3.5 loses an acknowledged record with MinISR 2 and one unclean shutdown (Last
Replica Standing: the ISR shrinks to the leader, which restarts empty and is elected
again), KIP-966 holds; with MinISR 1 and one data-loss shutdown both lose it (the
author's cfgs: "comment out [NoCommittedRecordLostGlobally] when MinISR =
DataLossShutdownLimit"). See ``docs/kafka-replication.md``.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Int,
    Record,
    Ref,
    Seq,
    SetOf,
    Spec,
    action,
    all_of,
    always_eventually,
    any_of,
    invariant,
    leads_to,
    not_,
    where,
)
from modelcheck.fairness import label_of
from modelcheck.types import SeqValue

__all__ = ["BStatus", "CStatus", "PStatus", "APErr", "FErr", "KafkaReplication",
           "KafkaReplicationKip966", "KafkaReplicationLive", "KafkaReplicationKip966Live",
           "KafkaReplicationView", "KafkaReplicationKip966View", "VIEW",
           "KIP966_CHECKS", "LRS_CONSTANTS", "constants_from_cfg",
           "invariants_from_cfg"]


class CStatus(IntEnum):
    FENCED = 0
    UNFENCED = 1


class BStatus(IntEnum):
    OFFLINE_CLEAN = 0
    OFFLINE_DIRTY = 1
    STARTING = 2
    RUNNING = 3


class PStatus(IntEnum):
    Nil = 0
    Leader = 1
    Follower = 2


class APErr(IntEnum):
    Nil = 0
    FencedLeaderEpoch = 1
    IneligibleReplica = 2


class FErr(IntEnum):
    Nil = 0
    NotLeaderOrFollower = 1
    UnknownLeaderEpoch = 2
    FencedLeaderEpoch = 3


#: the constants of the Last Replica Standing counterexample (unclean shutdown limit 1
#: = MinISR, the LRS guard off; two brokers, one out of sync at the start)
LRS_CONSTANTS = {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1,
                 "InitIsrSize": 1, "UncleanShutdownLimit": 1,
                 "AvoidLastReplicaStanding": False}

#: the TLA+ constants of the model that are constants of the spec (``Values`` -> NValues)
CFG_CONSTANTS = ("BrokerCount", "InitReplicationFactor", "MinISR", "InitIsrSize",
                 "CleanShutdownLimit", "UncleanShutdownLimit", "FenceBrokerLimit",
                 "LeaderShrinkIsrLimit", "ReassignmentLimit", "AvoidLastReplicaStanding",
                 "NoDataLossShutdownLimit", "DataLossShutdownLimit")


def constants_from_cfg(text: str) -> dict[str, Any]:
    """The spec constants of a TLC cfg of the model: its numeric and boolean
    ``CONSTANTS`` assignments, and ``Values = {A, B}`` as ``NValues = 2``."""
    out: dict[str, Any] = {}
    for line in text.splitlines():
        line = line.split("\\*")[0].strip()
        if "=" not in line:
            continue
        name, _, value = (x.strip() for x in line.partition("="))
        if name == "Values":
            out["NValues"] = len([v for v in value.strip("{} ").split(",") if v.strip()])
        elif name in CFG_CONSTANTS:
            out[name] = {"TRUE": True, "FALSE": False}.get(value, None)
            if out[name] is None:
                out[name] = int(value)
    return out


def invariants_from_cfg(text: str) -> list[str]:
    """The names under the cfg's ``INVARIANT`` keyword (to the next keyword)."""
    out: list[str] = []
    on = False
    for line in text.splitlines():
        word = line.split("\\*")[0].strip()
        if word in ("INVARIANT", "INVARIANTS"):
            on = True
        elif word.isupper() and word:
            on = False
        elif on and word:
            out.extend(word.split())
    return out


BrokerCount = Const(2, min=1)
NValues = Const(1, min=1)
MaxEpoch = Const(6, min=2)
MaxMetadataLog = Const(8, min=1)
MsgCap = Const(4, min=1)
DiscardCap = Const(12, min=1)

Brokers = Ids(1, BrokerCount)
Bs = SetOf(Brokers)
Ep = Int(0, MaxEpoch)
Off = Int(0, NValues + 1)
Val = Int(0, NValues)

MdRec = Record(replicas=Bs, isr=Bs, leader=Ref(Brokers, none=0), leader_epoch=Ep,
               partition_epoch=Ep, adding=Bs, removing=Bs)
MdRecK = Record(replicas=Bs, isr=Bs, elr=Bs, last_known_elr=Bs,
                leader=Ref(Brokers, none=0), leader_epoch=Ep, partition_epoch=Ep, adding=Bs,
                removing=Bs)
PartMd = Record(replicas=Bs, isr=Bs, maximal_isr=Bs, leader=Ref(Brokers, none=0),
                leader_epoch=Ep, partition_epoch=Ep)
PRec = Record(epoch=Ep, offset=Val, value=Val)
PData = Record(log=Seq(PRec, NValues), hwm=Int(1, NValues + 1), leo=Int(1, NValues + 1))
Fetch = Record(has=Bool(), fetch_offset=Off, last_fetched_epoch=Ep, delayed=Bool(),
               pending=Bool())
RepSt = Record(leo=Off, broker_epoch=Ep)
BSt = Record(status=Enum(BStatus), broker_epoch=Ep, incarnation_id=Ep, registered=Bool())
CReg = Record(status=Enum(CStatus), broker_epoch=Ep, incarnation_id=Ep)
APReq = Record(source=Ref(Brokers, none=0), isr=Bs, epochs=Seq(Ep, BrokerCount),
               leader_epoch=Ep, partition_epoch=Ep, broker_epoch=Ep)
PendAP = Record(epoch=Ep, has=Bool(), request=APReq)
APResp = Record(dest=Brokers, error=Enum(APErr), replicas=Bs, isr=Bs,
                leader=Ref(Brokers, none=0), leader_epoch=Ep, partition_epoch=Ep,
                request=APReq)
RegReq = Record(source=Brokers, incarnation_id=Ep)
RegReqK = Record(source=Brokers, broker_epoch=Ep, incarnation_id=Ep)
RegResp = Record(dest=Brokers, broker_epoch=Ep, incarnation_id=Ep,
                 metadata_offset=Int(0, MaxMetadataLog))
FReq = Record(source=Brokers, dest=Brokers, broker_epoch=Ep, leader_epoch=Ep,
              fetch_offset=Off, last_fetched_epoch=Ep)
FResp = Record(source=Brokers, dest=Brokers, error=Enum(FErr), leader_epoch=Ep,
               fetch_offset=Off, hwm=Off, div=Bool(), div_epoch=Ep, div_offset=Off,
               records=Seq(PRec, 1))

LEADER, FOLLOWER, PNIL = PStatus.Leader, PStatus.Follower, PStatus.Nil
RUNNING, STARTING = BStatus.RUNNING, BStatus.STARTING
OFFLINE = (BStatus.OFFLINE_CLEAN, BStatus.OFFLINE_DIRTY)
FENCED, UNFENCED = CStatus.FENCED, CStatus.UNFENCED


# -- sets of records as sorted sequences ----------------------------------------------
# A set is a sequence of its records sorted by their index in the record type
# (``type.index_of``), without duplicates. The operations below work on every slot at
# once: each cell of the element type as one matrix, slots first, the states of the
# batch after (or nothing after, for one state), so that an insertion is a few numpy
# operations per cell rather than a ``where`` of records per slot.
def _mats(et: Any, elems: list[Any]) -> list[np.ndarray]:
    """The cells of the values ``elems`` of type ``et``: one matrix per cell, slots
    first (every slot broadcast to the batch's shape)."""
    per = [et.columns(e) for e in elems]
    out = []
    for c in range(et.n_cells):
        col = [p[c] for p in per]
        try:
            out.append(np.stack(col))  # (every slot a column of the batch, or a scalar)
        except ValueError:  # columns and scalars: the scalars broadcast
            out.append(np.stack(np.broadcast_arrays(*col)))
    shape = np.broadcast_shapes(*(m.shape for m in out))
    return [m if m.shape == shape else np.broadcast_to(m, shape) for m in out]


def _slot(n: int, m: np.ndarray) -> np.ndarray:
    """``0..n-1``, shaped to broadcast against the slots-first matrix ``m``."""
    return np.arange(n).reshape((n,) + (1,) * (m.ndim - 1))


def _filled(q: Any, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q``'s length, the slot numbers and which slots hold an element, shaped as the
    slots-first matrix ``m`` of its cells."""
    length = np.asarray(q.len(), dtype=np.int64)
    j = _slot(m.shape[0], m)
    return length, j, j < length[None]


def _equal_slots(mats: list[np.ndarray], cols: list[Any]) -> np.ndarray:
    """Per slot: the element's cells are ``cols`` (the value's, one per cell)."""
    eq: Any = True
    for m, c in zip(mats, cols):
        eq = eq & (m == np.asarray(c)[None])
    return np.broadcast_to(eq, mats[0].shape)


def _seq(q: Any, length: Any, mats: list[np.ndarray]) -> Any:
    et = q.type.elem
    k = mats[0].shape[0]
    return SeqValue(q.type, length, [et.view([m[j] for m in mats]) for j in range(k)])


def _zeros(et: Any, like: np.ndarray) -> list[np.ndarray]:
    """The element type's first value, one slot shaped as a slot of ``like``."""
    return [np.broadcast_to(np.asarray(z), like.shape[1:])[None]
            for z in et.columns(et.zero())]


def _sadd(q: Any, x: Any, cond: Any = True) -> Any:
    """``q \\cup {x}`` (when ``cond``) for a sorted, duplicate-free sequence ``q``."""
    et = q.type.elem
    x = et.value_of(x)
    xc = et.columns(x)
    mats = _mats(et, q.elems)
    length, _, valid = _filled(q, mats[0])
    keys = et.index_of(et.view(list(mats)))[0]
    pos = np.sum(valid & (keys < np.asarray(et.index_of(x)[0])[None]), axis=0)
    do = not_(np.any(valid & _equal_slots(mats, xc), axis=0)) & cond
    j = _slot(mats[0].shape[0] + 1, mats[0])
    out = []
    for m, c, z in zip(mats, xc, _zeros(et, mats[0])):
        ext = np.concatenate([m, z])
        shifted = np.concatenate([z, m])
        new = np.where(j < pos, ext, np.where(j == pos, np.asarray(c)[None], shifted))
        out.append(np.where(do, new, ext))
    return _seq(q, np.where(do, length + 1, length), out)


def _sdel(q: Any, x: Any, cond: Any = True) -> Any:
    """``q \\ {x}`` (when ``cond``)."""
    et = q.type.elem
    mats = _mats(et, q.elems)
    length, j, valid = _filled(q, mats[0])
    eq = valid & _equal_slots(mats, et.columns(et.value_of(x)))
    first = np.argmax(eq, axis=0)
    do = np.any(eq, axis=0) & cond
    out = []
    for m, z in zip(mats, _zeros(et, mats[0])):
        after = np.concatenate([m[1:], z])
        out.append(np.where(do & (j >= first), after, m))
    return _seq(q, np.where(do, length - 1, length), out)


def _sfilter(q: Any, keep: Any) -> Any:
    """``{x \\in q: keep(x)}``, order kept (``keep`` is given the elements of every
    slot at once)."""
    et = q.type.elem
    mats = _mats(et, q.elems)
    _, j, valid = _filled(q, mats[0])
    kept = np.broadcast_to(valid & keep(et.view(list(mats))), mats[0].shape)
    order = np.argsort(~kept, axis=0, kind="stable")
    count = np.sum(kept, axis=0)
    out = [np.where(j < count, np.take_along_axis(m, order, axis=0), z)
           for m, z in zip(mats, _zeros(et, mats[0]))]
    return _seq(q, count, out)


def _sunion(q: Any, r: Any) -> Any:
    """``q \\cup r`` for two sorted, duplicate-free sequences of one element type."""
    et = q.type.elem
    mq, mr = _mats(et, q.elems), _mats(et, r.elems)
    shape = np.broadcast_shapes(mq[0].shape[1:], mr[0].shape[1:])
    mq = [np.broadcast_to(m, m.shape[:1] + shape) for m in mq]
    mr = [np.broadcast_to(m, m.shape[:1] + shape) for m in mr]
    lq, _, vq = _filled(q, mq[0])
    _, _, vr = _filled(r, mr[0])
    dup: Any = vq[:, None]
    for a, b in zip(mq, mr):
        dup = dup & (a[:, None] == b[None])
    add = vr & ~np.any(dup, axis=0)
    both = [np.concatenate([a, b]) for a, b in zip(mq, mr)]
    keys = et.index_of(et.view(list(both)))[0]
    keys = np.where(np.concatenate([vq, add]), keys, np.int64(1) << 62)
    order = np.argsort(keys, axis=0, kind="stable")
    length = lq + np.sum(add, axis=0)
    j = _slot(both[0].shape[0], both[0])
    out = [np.where(j < length, np.take_along_axis(m, order, axis=0), z)
           for m, z in zip(both, _zeros(et, both[0]))]
    return _seq(q, length, out)


def _off(t: Any, g: Any) -> bool:
    """No state of the batch enables the action (its next state need not be built)."""
    return bool(t.none_enabled(g))


def _mask(m: int, bs: range) -> set[int]:
    return {b for b in bs if m >> (b - 1) & 1}


class _Vars(dict):
    """Every variable's value, read from the current state on first use."""

    def __init__(self, spec: Any, s: Any) -> None:
        super().__init__()
        self.spec, self.s = spec, s

    def __missing__(self, name: str) -> Any:
        spec, s = self.spec, self.s
        bs = spec.Brokers
        val = getattr(s, name)
        if name in spec._arr1:
            out: Any = {b: val[b] for b in bs}
        elif name in spec._arr2:
            out = {b: {c: val[b][c] for c in bs} for b in bs}
        else:
            out = val
        self[name] = out
        return out


class _Next:
    """The next state being built: every variable's value, updated under conditions."""

    def __init__(self, spec: Any, s: Any) -> None:
        self.v: dict[str, Any] = _Vars(spec, s)
        self.s = s

    def write(self, spec: Any, t: Any) -> None:
        for name, val in self.v.items():
            if name in spec._arr1:
                for b, x in val.items():
                    getattr(t, name)[b] = x
            elif name in spec._arr2:
                for b, row in val.items():
                    for c, x in row.items():
                        getattr(t, name)[b][c] = x
            else:
                setattr(t, name, val)


class _Replication(Spec):
    """What the v3.5 model and the KIP-966 model share (every action but the shutdowns,
    every variable, the properties they state alike); see the module docstring."""

    check_deadlock = False

    BrokerCount = BrokerCount
    InitReplicationFactor = Const(2, min=1)
    NValues = NValues
    MinISR = Const(1, min=0)
    InitIsrSize = Const(2, min=1)
    FenceBrokerLimit = Const(0, min=0)
    LeaderShrinkIsrLimit = Const(0, min=0)
    ReassignmentLimit = Const(0, min=0)
    MaxEpoch = MaxEpoch
    MaxMetadataLog = MaxMetadataLog
    MsgCap = MsgCap
    DiscardCap = DiscardCap
    Brokers = Brokers

    # controller
    con_unfenced = Bs
    con_broker_reg = Array(Brokers, CReg)
    con_partition_metadata = MdRec
    con_metadata_log = Seq(MdRec, MaxMetadataLog)
    # brokers
    broker_state = Array(Brokers, BSt)
    broker_fetchers = Array(Brokers, Array(Brokers, Fetch))
    broker_metadata_log = Array(Brokers, Seq(MdRec, MaxMetadataLog))
    # replicas
    partition_status = Array(Brokers, Enum(PStatus))
    partition_metadata = Array(Brokers, PartMd)
    partition_data = Array(Brokers, PData)
    partition_leso = Array(Brokers, Off)
    partition_replica_state = Array(Brokers, Array(Brokers, RepSt))
    partition_pending_ap = Array(Brokers, PendAP)
    # auxiliary
    aux_broker_epoch = Ep
    aux_ctrs = Record(incarn_ctr=Ep, clean_shutdown_ctr=Int(0, 9),
                      unclean_shutdown_ctr=Int(0, 9), fence_broker_ctr=Int(0, 9),
                      leader_shrink_isr_ctr=Int(0, 9), reassignment_ctr=Int(0, 9))
    aux_flo = Array(Brokers, Off)
    inv_sent = SetOf(Int(1, NValues))
    inv_pos_acked = SetOf(Int(1, NValues))
    inv_neg_acked = SetOf(Int(1, NValues))
    inv_true_hwm = Int(1, NValues + 1)
    inv_consumed = Seq(PRec, NValues)
    # network: messages and messages_discard, one sorted sequence per kind
    m_regreq = Seq(RegReq, MsgCap)
    m_regresp = Seq(RegResp, MsgCap)
    m_apreq = Seq(APReq, MsgCap)
    m_apresp = Seq(APResp, MsgCap)
    m_freq = Seq(FReq, MsgCap)
    m_fresp = Seq(FResp, MsgCap)
    d_regreq = Seq(RegReq, DiscardCap)
    d_regresp = Seq(RegResp, DiscardCap)
    d_apreq = Seq(APReq, DiscardCap)
    d_apresp = Seq(APResp, DiscardCap)
    d_freq = Seq(FReq, DiscardCap)
    d_fresp = Seq(FResp, DiscardCap)

    _arr1 = frozenset({"con_broker_reg", "broker_state", "broker_metadata_log",
                       "partition_status", "partition_metadata", "partition_data",
                       "partition_leso", "partition_pending_ap", "aux_flo"})
    _arr2 = frozenset({"broker_fetchers", "partition_replica_state"})

    # the CHECKs of the source (a bug variant turns one off)
    check_isr_epoch_zero = True          # IsEligibleBroker: broker_epoch = 0 \/ ...
    check_ap_partition_epoch = True      # ValidateAlterPartitionRequest: partition epoch
    check_reg_incarnation = True         # ReceiveBrokerRegResponse: incarnation id
    check_fetcher_epoch_bump = True      # AddPartitionToFetcher: leader epoch bump
    check_reset_out_of_sync = True       # BecomeLeaderInNewEpoch: reset non-ISR state
    check_caught_up_fetched = True       # FollowerIsCaughtUp: leo # Nil
    check_caught_up_hwm = True           # FollowerIsCaughtUp: leo >= HWM
    check_caught_up_leso = True          # FollowerIsCaughtUp: leo >= LESO
    check_fetch_offset = True            # ReceiveFetchResponse: fetch offset matches
    check_fetch_epoch = True             # ReceiveFetchResponse: leader epoch matches

    # ---------------------------------------------------------------- Init
    def init_states(self) -> Any:
        bs = list(self.Brokers)
        rf, isz = self.InitReplicationFactor, self.InitIsrSize
        reps = set(bs[:rf])                # CHOOSE: 1 \in replicas, |replicas| = RF
        isr = set(bs[:isz])
        pe = 1 if isz == rf else 2
        rec = {"replicas": reps, "isr": isr, "leader": 1, "leader_epoch": 1,
               "partition_epoch": pe, "adding": set(), "removing": set(),
               **self._md_extra()}
        unf = set(bs) - (reps - isr)
        blank_md = {"replicas": set(), "isr": set(), "maximal_isr": set(), "leader": 0,
                    "leader_epoch": 0, "partition_epoch": 0}
        nof = {"has": False, "fetch_offset": 0, "last_fetched_epoch": 0, "delayed": False,
               "pending": False}

        def pmd(b: int) -> dict[str, Any]:
            if b not in reps:
                return blank_md
            if b in isr:
                return {"replicas": reps, "isr": isr, "maximal_isr": isr, "leader": 1,
                        "leader_epoch": 1, "partition_epoch": pe}
            return {"replicas": reps, "isr": reps, "maximal_isr": reps, "leader": 1,
                    "leader_epoch": 1, "partition_epoch": 1}

        zero_req = {"source": 0, "isr": set(), "epochs": [0] * len(bs), "leader_epoch": 0,
                    "partition_epoch": 0, "broker_epoch": 0}
        st: dict[str, Any] = {
            "con_unfenced": unf,
            "con_broker_reg": {b: {"status": UNFENCED if b in unf else FENCED,
                                   "broker_epoch": b, "incarnation_id": b} for b in bs},
            "con_metadata_log": [rec],
            "con_partition_metadata": rec,
            "broker_state": {b: {"status": RUNNING, "broker_epoch": b, "incarnation_id": b,
                                 "registered": True} for b in bs},
            "broker_fetchers": {b: {c: ({**nof, "has": True, "fetch_offset": 1}
                                        if b != 1 and c == 1 else nof) for c in bs}
                                for b in bs},
            "broker_metadata_log": {b: [rec] if b in unf else [] for b in bs},
            "partition_status": {b: LEADER if b == 1 else FOLLOWER if b in reps else PNIL
                                 for b in bs},
            "partition_metadata": {b: pmd(b) for b in bs},
            "partition_data": {b: {"log": [], "hwm": 1, "leo": 1} for b in bs},
            "partition_leso": {b: 1 if b == 1 else 0 for b in bs},
            "partition_replica_state": {b: {c: {"leo": 0, "broker_epoch": 0} for c in bs}
                                        for b in bs},
            "partition_pending_ap": {b: {"epoch": 0, "has": False, "request": zero_req}
                                     for b in bs},
            "aux_broker_epoch": len(bs),
            "aux_ctrs": {"incarn_ctr": len(bs) + 1, "clean_shutdown_ctr": 0,
                         "unclean_shutdown_ctr": 0, "fence_broker_ctr": 0,
                         "leader_shrink_isr_ctr": 0, "reassignment_ctr": 0},
            "aux_flo": {b: 0 for b in bs},
        }
        yield st

    # ---------------------------------------------------------------- helpers
    def _md_extra(self) -> dict[str, Any]:
        """The fields of a metadata record beyond v3.5's (KIP-966: the ELRs)."""
        return {}

    def _safe_hwm(self, isr: Any) -> Any:
        """``SafeToAdvanceHwm(b, isr)``: v3.5 always advances the high watermark."""
        return True

    def _ap_elr(self, s: Any, complete: Any, final_isr: Any, final_replicas: Any,
                isr: Any) -> Any:
        """The ELR of ReceiveAlterPartitionRequest's change (none in v3.5)."""
        return None

    def _reassign_elr(self, s: Any, complete: Any, final_isr: Any, final_replicas: Any
                      ) -> Any:
        """The ELR of PerformPartitionReassignment's change (none in v3.5)."""
        return None

    def _flo(self, n: _Next, b: int) -> Any:
        f = n.v["aux_flo"][b]
        return where(f == 0, 10000, f)

    def _commit_offset(self, s: Any, b: int, maximal_isr: Any, leo: Any, rs: Any) -> Any:
        """GetCommitOffset(b, maximal_isr, leo, replica_state); ``rs`` maps id -> RepSt."""
        co: Any = 0
        for o in range(1, self.NValues + 1):
            committed = all_of(self.Brokers, lambda b1, o=o: implies_(
                maximal_isr.has(b1),
                (b1 == b) | ((rs[b1].leo != 0) & (rs[b1].leo > o))))
            co = where((o <= leo - 1) & committed, o, co)
        return where(s.partition_data[b].leo == 1, 0, co)

    def _acks(self, s: Any, n: _Next, b: int, lower: Any, higher: Any, positive: bool,
              cond: Any) -> None:
        """SendAcksFor(b, lower, higher, ack_type) under ``cond``."""
        log = s.partition_data[b].log
        name = "inv_pos_acked" if positive else "inv_neg_acked"
        acc = n.v[name]
        flo = self._flo(_Now(s), b)
        for v in range(1, self.NValues + 1):
            hit = any_of(range(1, self.NValues + 1), lambda o, v=v: (
                (o >= lower) & (o <= higher) & (log.at(o).value == v) & (o >= flo)))
            take = (s.inv_sent.has(v) & not_(s.inv_pos_acked.has(v))
                    & not_(s.inv_neg_acked.has(v)) & hit & cond)
            acc = where(take, acc.with_(v), acc)
        n.v[name] = acc

    def _update_hwm_inv(self, s: Any, n: _Next, b: int, old: Any, new: Any, ack: Any,
                        cond: Any) -> None:
        """UpdateHwmInvariantVars(b, old_hwm, new_hwm, ack_type) under ``cond``."""
        leo = s.partition_data[b].leo
        self._acks(s, n, b, old, new - 1, True, cond & ack)
        self._acks(s, n, b, old, leo - 1, False, cond & not_(ack))
        th = s.inv_true_hwm
        adv = cond & (new > th)
        n.v["inv_true_hwm"] = where(adv, new, n.v["inv_true_hwm"])
        log = s.partition_data[b].log
        sub = log.drop(th - 1).prefix(new - th)
        n.v["inv_consumed"] = where(adv, s.inv_consumed.concat(sub), n.v["inv_consumed"])

    def _maybe_advance_hwm(self, s: Any, n: _Next, b: int, old: Any, new: Any, ack: Any,
                           cond: Any) -> None:
        adv = cond & (new > old)
        pd = n.v["partition_data"][b]
        n.v["partition_data"][b] = where(adv, pd.with_fields(hwm=new), pd)
        self._update_hwm_inv(s, n, b, old, new, ack, adv)

    def _hwm_on_change(self, s: Any, n: _Next, b: int, part_md: Any, cond: Any) -> None:
        """MaybeUpdateHwmAndAckOnPartitionChange(b, part_md)."""
        rs = {c: s.partition_replica_state[b][c] for c in self.Brokers}
        new = self._commit_offset(s, b, part_md.maximal_isr, s.partition_data[b].leo, rs) + 1
        new = where(self._safe_hwm(part_md.isr), new, s.partition_data[b].hwm)
        ack = part_md.maximal_isr.size() >= self.MinISR
        self._maybe_advance_hwm(s, n, b, s.partition_data[b].hwm, new, ack, cond)

    def _fail_pending(self, s: Any, n: _Next, b: int, cond: Any) -> None:
        pd = s.partition_data[b]
        self._acks(s, n, b, pd.hwm, pd.leo - 1, False, cond)

    def _maybe_fail_pending(self, s: Any, n: _Next, b: int, ps: Any, cond: Any) -> None:
        pd = s.partition_data[b]
        c = (pd.hwm < pd.leo) & ((ps.isr.size() < self.MinISR) | (ps.leader != b))
        self._fail_pending(s, n, b, cond & c)

    def _set(self, n: _Next, name: str, val: Any, cond: Any, *idx: int) -> None:
        if not idx:
            n.v[name] = where(cond, val, n.v[name])
        elif len(idx) == 1:
            n.v[name][idx[0]] = where(cond, val, n.v[name][idx[0]])
        else:
            n.v[name][idx[0]][idx[1]] = where(cond, val, n.v[name][idx[0]][idx[1]])

    def _blank_rs(self) -> dict[str, int]:
        return {"leo": 0, "broker_epoch": 0}

    def _reset_followers(self, n: _Next, b: int, cond: Any, keep: Any = None) -> None:
        for c in self.Brokers:
            k = False if keep is None else keep.has(c)
            self._set(n, "partition_replica_state", self._blank_rs(), cond & not_(k), b, c)

    def _reset_pending_ap(self, n: _Next, b: int, cond: Any) -> None:
        """ResetPendingAlterPartition(b): a Nil request, written as the initial state
        has it (one encoding of Nil, so that states equal in TLA+ are equal here, on
        the view too: ``epochs`` of ``BrokerCount`` zeros, not the empty sequence)."""
        cur = n.v["partition_pending_ap"][b]
        req = cur.type.fields["request"]
        nil = req.zero().with_fields(epochs=req.fields["epochs"].value_of(
            [0] * self.BrokerCount))
        self._set(n, "partition_pending_ap",
                  cur.with_fields(epoch=0, has=False, request=nil), cond, b)

    def _nil_fetch(self, f: Any) -> Any:
        return f.with_fields(has=False, fetch_offset=0, last_fetched_epoch=0, delayed=False)

    def _remove_from_fetchers(self, n: _Next, b: int, cond: Any) -> None:
        for c in self.Brokers:
            f = n.v["broker_fetchers"][b][c]
            self._set(n, "broker_fetchers", self._nil_fetch(f), cond, b, c)

    def _renounce(self, s: Any, n: _Next, b: int, ps: Any, cond: Any) -> None:
        """EnsureLeadershipRenounced(b, new_part_md)."""
        self._maybe_fail_pending(s, n, b, ps, cond)
        self._reset_followers(n, b, cond)
        self._reset_pending_ap(n, b, cond)
        self._set(n, "aux_flo", 0, cond, b)

    def _apply_change(self, n: _Next, cond: Any, replicas: Any, leader: Any, isr: Any,
                      le: Any, pe: Any, adding: Any, removing: Any, elr: Any = None) -> None:
        """ApplyPartitionChange(...) (``elr``: KIP-966's ``new_elr``)."""
        md = n.v["con_partition_metadata"]
        rec = md.with_fields(replicas=replicas, isr=isr, leader=leader, leader_epoch=le,
                             partition_epoch=pe, adding=adding, removing=removing,
                             **self._elr_fields(n, isr, replicas, elr))
        self._set(n, "con_partition_metadata", rec, cond)
        self._set(n, "con_metadata_log", n.v["con_metadata_log"].append(rec), cond)

    def _elr_fields(self, n: _Next, isr: Any, replicas: Any, elr: Any) -> dict[str, Any]:
        """The ELR fields of ApplyPartitionChange's record (none in v3.5)."""
        return {}

    def _broker_change(self, s: Any, n: _Next, new_isr: Any, new_unf: Any, c: int,
                       cond: Any) -> Any:
        """MaybeUpdatePartitionOnBrokerChange(new_isr, new_unfenced) with candidate ``c``;
        returns the guard on ``c`` (1 unless arm 3 picks a candidate)."""
        md = s.con_partition_metadata
        cands = new_isr & new_unf
        any_cand = not_(cands.is_empty())
        no_change = (((md.leader == 0) & not_(any_cand))
                     | (new_isr.has(md.leader) & new_unf.has(md.leader)))
        arm2 = no_change & (new_isr != md.isr)
        arm3 = not_(no_change) & any_cand
        arm4 = not_(no_change) & not_(any_cand)
        self._apply_change(n, cond & arm2, md.replicas, md.leader, new_isr,
                           md.leader_epoch, md.partition_epoch + 1, md.adding, md.removing)
        self._apply_change(n, cond & arm3, md.replicas, c, new_isr, md.leader_epoch + 1,
                           md.partition_epoch + 1, md.adding, md.removing)
        self._apply_change(n, cond & arm4, md.replicas, 0, new_isr, md.leader_epoch + 1,
                           md.partition_epoch + 1, md.adding, md.removing)
        return where(cond & arm3, cands.has(c), c == 1)

    def _fenced(self, s: Any, n: _Next, b: int, c: int) -> Any:
        """HandleBrokerFenced(b)."""
        isr = s.con_partition_metadata.isr
        new_isr = where(isr.size() == 1, isr, isr.without(b))
        new_unf = s.con_unfenced.without(b)
        g = self._broker_change(s, n, new_isr, new_unf, c, True)
        n.v["con_unfenced"] = new_unf
        return g

    def _unfenced(self, s: Any, n: _Next, b: int, c: int) -> Any:
        """HandleBrokerUnfenced(b)."""
        new_unf = s.con_unfenced.with_(b)
        g = self._broker_change(s, n, s.con_partition_metadata.isr, new_unf, c,
                                s.con_partition_metadata.leader == 0)
        n.v["con_unfenced"] = new_unf
        return g

    def _reply(self, n: _Next, kind: str, d: Any, rkind: str, m: Any, cond: Any = True
               ) -> None:
        """Reply(d, m): d leaves messages for messages_discard, m is sent."""
        n.v[f"m_{kind}"] = _sdel(n.v[f"m_{kind}"], d, cond)
        n.v[f"d_{kind}"] = _sadd(n.v[f"d_{kind}"], d, cond)
        n.v[f"m_{rkind}"] = _sadd(n.v[f"m_{rkind}"], m, cond)

    def _discard(self, n: _Next, kind: str, d: Any) -> None:
        n.v[f"m_{kind}"] = _sdel(n.v[f"m_{kind}"], d)
        n.v[f"d_{kind}"] = _sadd(n.v[f"d_{kind}"], d)

    def _drop_fetch_sessions(self, s: Any, n: _Next, b: int) -> None:
        for kind in ("freq", "fresp"):
            q = n.v[f"m_{kind}"]

            def involved(m: Any) -> Any:
                return (m.dest == b) | (m.source == b)
            dropped = _sfilter(q, involved)
            n.v[f"m_{kind}"] = _sfilter(q, lambda m: not_(involved(m)))
            n.v[f"d_{kind}"] = _sunion(n.v[f"d_{kind}"], dropped)
        for b1 in self.Brokers:
            for c in self.Brokers:
                f = s.broker_fetchers[b1][c]
                if b1 == b:
                    n.v["broker_fetchers"][b1][c] = self._nil_fetch(f).with_fields(
                        pending=False)
                elif c == b:
                    n.v["broker_fetchers"][b1][c] = where(
                        f.pending, f.with_fields(pending=False, delayed=f.has), f)

    def _last_offset_for_epoch(self, s: Any, b: int, req: Any, is_leader: bool
                               ) -> tuple[Any, Any]:
        """LastOffsetForEpoch(b, req_epoch, is_leader) as (epoch, offset)."""
        pd = s.partition_data[b]
        log, n_ = pd.log, pd.log.len()
        le = s.partition_metadata[b].leader_epoch
        offs = range(1, self.NValues + 1)

        def ep(o: int) -> Any:
            return log.at(o).epoch

        def inlog(o: int) -> Any:
            return o <= n_
        simple = (n_ == 0) | ((n_ > 0) & (req == log.last().epoch))
        if is_leader:
            simple = simple | (le == req)
        exists_higher = any_of(offs, lambda o: inlog(o) & (ep(o) > req))
        higher: Any = 0
        for o in reversed(offs):
            ok = inlog(o) & (ep(o) > req) & not_(any_of(offs, lambda o2, o=o: (
                inlog(o2) & (o2 < o) & (ep(o2) > req) & (ep(o2) < ep(o)))))
            higher = where(ok, o, higher)
        fallback = pd.leo if is_leader else 0
        if is_leader:
            fallback = where(le > req, pd.leo, 0)
        higher = where(exists_higher, higher, fallback)
        floor: Any = 0
        for o in reversed(offs):
            ok = inlog(o) & (ep(o) <= req) & not_(any_of(offs, lambda o2, o=o: (
                inlog(o2) & (ep(o2) <= req) & (ep(o2) > ep(o)))))
            floor = where(ok, o, floor)
        exists_floor = any_of(offs, lambda o: inlog(o) & (ep(o) <= req))
        epoch = where(simple, req, where(exists_floor, log.at(floor).epoch, req))
        offset = where(simple, pd.leo, higher)
        return epoch, offset

    # ---------------------------------------------------------------- actions
    @action(b=Brokers)
    def BrokerStart(self, s: Any, t: Any, b: int) -> Any:
        st = s.broker_state[b].status
        g = (st == BStatus.OFFLINE_CLEAN) | (st == BStatus.OFFLINE_DIRTY)
        if _off(t, g):
            return g
        n = _Next(self, s)
        inc = s.aux_ctrs.incarn_ctr
        n.v["broker_state"][b] = s.broker_state[b].with_fields(
            status=STARTING, broker_epoch=0, incarnation_id=inc, registered=False)
        n.v["partition_status"][b] = PNIL
        n.v["m_regreq"] = _sadd(s.m_regreq, {"source": b, "incarnation_id": inc})
        n.v["aux_ctrs"] = s.aux_ctrs.with_fields(incarn_ctr=inc + 1)
        n.write(self, t)
        return g

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1), c=Brokers)
    def ReceiveBrokerRegRequest(self, s: Any, t: Any, b: int, k: int, c: int) -> Any:
        m = s.m_regreq.at(k)
        if _off(t, (k <= s.m_regreq.len()) & (m.source == b)):
            return np.False_
        n = _Next(self, s)
        reg = s.con_broker_reg[b]
        epoch = s.aux_broker_epoch + 1
        n.v["con_broker_reg"][b] = reg.with_fields(
            status=UNFENCED, broker_epoch=epoch, incarnation_id=m.incarnation_id)
        g = self._unfenced(s, n, b, c)
        self._reply(n, "regreq", m, "regresp", {
            "dest": b, "broker_epoch": epoch, "incarnation_id": m.incarnation_id,
            "metadata_offset": s.con_metadata_log.len()})
        n.v["aux_broker_epoch"] = epoch
        n.write(self, t)
        return ((k <= s.m_regreq.len()) & (m.source == b)
                & ((reg.status == FENCED) | (reg.incarnation_id == m.incarnation_id)) & g)

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1))
    def ReceiveBrokerRegResponse(self, s: Any, t: Any, b: int, k: int) -> Any:
        m = s.m_regresp.at(k)
        if _off(t, (k <= s.m_regresp.len()) & (m.dest == b)):
            return np.False_
        n = _Next(self, s)
        bst = s.broker_state[b]
        n.v["broker_state"][b] = bst.with_fields(status=RUNNING, broker_epoch=m.broker_epoch,
                                                 registered=True)
        log = s.con_metadata_log.prefix(where(m.metadata_offset <= 1, 0,
                                              m.metadata_offset - 1))
        n.v["broker_metadata_log"][b] = log
        n.v["partition_metadata"][b] = s.partition_metadata[b].type.zero()
        self._discard(n, "regresp", m)
        n.write(self, t)
        g = (k <= s.m_regresp.len()) & (m.dest == b) & (bst.status == STARTING) & not_(
            bst.registered)
        if self.check_reg_incarnation:
            g = g & (bst.incarnation_id == m.incarnation_id)
        return g

    @action(b=Brokers, c=Brokers)
    def UnfenceBroker(self, s: Any, t: Any, b: int, c: int) -> Any:
        if _off(t, (s.con_broker_reg[b].status == FENCED) & (s.broker_state[b].status == RUNNING)):
            return np.False_
        n = _Next(self, s)
        g = self._unfenced(s, n, b, c)
        n.v["con_broker_reg"][b] = s.con_broker_reg[b].with_fields(status=UNFENCED)
        n.write(self, t)
        return (s.con_broker_reg[b].status == FENCED) & (s.broker_state[b].status == RUNNING) & g

    @action(b=Brokers, c=Brokers)
    def FenceBroker(self, s: Any, t: Any, b: int, c: int) -> Any:
        if _off(t, (s.aux_ctrs.fence_broker_ctr < self.FenceBrokerLimit)
                & (s.con_broker_reg[b].status == UNFENCED)):
            return np.False_
        n = _Next(self, s)
        g = self._fenced(s, n, b, c)
        n.v["con_broker_reg"][b] = s.con_broker_reg[b].with_fields(status=FENCED)
        n.v["aux_ctrs"] = s.aux_ctrs.with_fields(
            fence_broker_ctr=s.aux_ctrs.fence_broker_ctr + 1)
        n.write(self, t)
        return ((s.aux_ctrs.fence_broker_ctr < self.FenceBrokerLimit)
                & (s.con_broker_reg[b].status == UNFENCED) & g)

    def _needs_action(self, s: Any, b: int, rec: Any) -> Any:
        pm = s.partition_metadata[b]
        return ((s.partition_status[b] == LEADER)
                | (pm.replicas.has(b) & (rec.leader_epoch > pm.leader_epoch))
                | (not_(pm.replicas.has(b)) & rec.replicas.has(b)))

    @action(b=Brokers, o=lambda self: range(1, self.MaxMetadataLog + 1))
    def ReceiveMetadataUpdate(self, s: Any, t: Any, b: int, o: int) -> Any:
        bml = s.broker_metadata_log[b]
        log = s.con_metadata_log
        rec = log.at(o)
        bst = s.broker_state[b]
        g0 = ((bst.status != BStatus.OFFLINE_CLEAN) & (bst.status != BStatus.OFFLINE_DIRTY)
              & bst.registered & (o >= bml.len() + 1) & (o <= log.len())
              & self._needs_action(s, b, rec))
        if _off(t, g0):
            return g0
        n = _Next(self, s)
        zero = log.type.elem.zero()
        n.v["broker_metadata_log"][b] = SeqValue(bml.type, np.int64(o) + 0 * bml.len(), [
            where(bml.len() > i, bml.elems[i], log.elems[i]) if i < o else zero
            for i in range(len(bml.elems))])
        cur = s.partition_metadata[b]
        new = cur.with_fields(replicas=rec.replicas, isr=rec.isr, maximal_isr=rec.isr,
                              leader=rec.leader, leader_epoch=rec.leader_epoch,
                              partition_epoch=rec.partition_epoch)
        is_new_leader = (s.partition_status[b] != LEADER) & (rec.leader == b)
        change = rec.partition_epoch > cur.partition_epoch
        in_new = new.replicas.has(b)
        self._set(n, "partition_metadata", where(in_new, new, cur.type.zero()), change, b)
        delete = cur.replicas.has(b) & not_(in_new)
        c2 = not_(delete) & (cur.leader == b) & (rec.leader == b)
        c3 = not_(delete) & not_(c2) & (cur.leader != b) & (rec.leader == b)
        c4 = not_(delete) & not_(c2) & not_(c3) & in_new & (rec.leader != 0)
        c5 = not_(delete) & not_(c2) & not_(c3) & not_(c4)
        remain_leader = change & c2 & (cur.leader_epoch == new.leader_epoch)
        become_leader = change & ((c2 & (cur.leader_epoch != new.leader_epoch)) | c3)
        remain_follower = (change & c4 & (new.leader_epoch == cur.leader_epoch)
                           & (cur.leader != b) & (new.leader != b))
        become_follower = change & c4 & not_(remain_follower)
        wait = change & c5
        delete = change & delete
        pd = s.partition_data[b]
        # 1. RemainLeader
        self._hwm_on_change(s, n, b, new, remain_leader)
        self._reset_pending_ap(n, b, remain_leader & (
            new.partition_epoch >= s.partition_pending_ap[b].epoch))
        # 2. BecomeLeaderInNewEpoch
        self._set(n, "partition_status", LEADER, become_leader, b)
        self._hwm_on_change(s, n, b, new, become_leader)
        self._set(n, "partition_leso", pd.leo, become_leader, b)
        self._reset_followers(n, b, become_leader & is_new_leader)
        if self.check_reset_out_of_sync:
            self._reset_followers(n, b, become_leader & not_(is_new_leader), keep=new.isr)
        self._reset_pending_ap(n, b, become_leader)
        self._remove_from_fetchers(n, b, become_leader)
        # 4. BecomeFollowerInNewEpoch
        self._set(n, "partition_status", FOLLOWER, become_follower, b)
        add = new.leader_epoch > cur.leader_epoch
        if not self.check_fetcher_epoch_bump:
            add = False
        added = any_of(self.Brokers, lambda c: (new.leader == c)
                       & s.broker_fetchers[b][c].has)
        add = become_follower & (add | not_(added))
        last_epoch = where(pd.log.len() == 0, 0, pd.log.last().epoch)
        for c in self.Brokers:
            f = s.broker_fetchers[b][c]
            fetch = f.with_fields(has=True, fetch_offset=pd.leo, last_fetched_epoch=last_epoch,
                                  delayed=False)
            self._set(n, "broker_fetchers", where(new.leader == c, fetch, self._nil_fetch(f)),
                      add, b, c)
        self._set(n, "partition_leso", 0, become_follower | wait | delete, b)
        self._renounce(s, n, b, new, become_follower | wait | delete)
        # 5. WaitForLeaderChange, 6. DeletePartition
        self._set(n, "partition_status", PNIL, wait | delete, b)
        self._remove_from_fetchers(n, b, wait | delete)
        self._set(n, "partition_data", pd.with_fields(log=pd.log.prefix(0), hwm=1, leo=1),
                  delete, b)
        n.write(self, t)
        return g0 & implies_(wait, in_new)

    def _validate_ap(self, s: Any, b: Any, m: Any) -> Any:
        """ValidateAlterPartitionRequest(b, m) (an APErr)."""
        md = s.con_partition_metadata
        reg_epoch = any_of(self.Brokers, lambda c: (c == b) & (
            m.broker_epoch == s.con_broker_reg[c].broker_epoch))
        ok = (md.leader == b) & reg_epoch
        if self.check_ap_partition_epoch:
            ok = ok & (m.partition_epoch == md.partition_epoch)

        def eligible(c: int) -> Any:
            e = m.epochs.at(c)
            same = s.con_broker_reg[c].broker_epoch == e
            if self.check_isr_epoch_zero:
                same = same | (e == 0)
            return (s.con_broker_reg[c].status == UNFENCED) & same
        elig = all_of(self.Brokers, lambda c: implies_(m.isr.has(c), eligible(c)))
        return where(ok, where(elig, APErr.Nil, APErr.IneligibleReplica),
                     APErr.FencedLeaderEpoch)

    @action(b=Brokers, to=lambda self: range(0, 1 << self.BrokerCount))
    def SendAlterPartitionRequest(self, s: Any, t: Any, b: int, to: int) -> Any:
        timed_out = _mask(to, self.Brokers)
        if b in timed_out:
            return False
        pm = s.partition_metadata[b]
        if _off(t, (s.broker_state[b].status == RUNNING)
                & not_(s.partition_pending_ap[b].epoch > pm.partition_epoch)
                & (s.partition_status[b] == LEADER)):
            return np.False_
        n = _Next(self, s)
        cur = pm.isr
        pd = s.partition_data[b]
        rs = s.partition_replica_state[b]
        proposed = cur - cur
        epochs = []
        for c in self.Brokers:
            leo = rs[c].leo
            caught = (cur.has(c) & (c not in timed_out))
            out = not_(cur.has(c))
            if self.check_caught_up_fetched:
                out = out & (leo != 0)
            if self.check_caught_up_hwm:
                out = out & (leo >= pd.hwm)
            if self.check_caught_up_leso:
                out = out & (leo >= s.partition_leso[b])
            member = pm.replicas.has(c) & ((c == b) | caught | out)
            proposed = where(member, proposed.with_(c), proposed)
            e = (s.broker_state[b].broker_epoch if c == b
                 else where(cur.has(c), 0, rs[c].broker_epoch))
            epochs.append(where(member, e, 0))
        req = {"source": b, "isr": proposed, "epochs": epochs,
               "leader_epoch": pm.leader_epoch, "partition_epoch": pm.partition_epoch,
               "broker_epoch": s.broker_state[b].broker_epoch}
        reqv = s.m_apreq.type.elem.value_of(req)
        sent = s.m_apreq.contains(reqv) | s.d_apreq.contains(reqv)
        avoid = not_(sent) | (self._validate_ap(s, b, reqv) == APErr.Nil)
        n.v["m_apreq"] = _sadd(s.m_apreq, reqv)
        n.v["partition_metadata"][b] = pm.with_fields(maximal_isr=proposed | cur)
        n.v["partition_pending_ap"][b] = s.partition_pending_ap[b].with_fields(
            epoch=pm.partition_epoch + 1, has=True, request=reqv)
        shrink = not_(cur <= proposed)
        ctrs = s.aux_ctrs
        n.v["aux_ctrs"] = where(shrink, ctrs.with_fields(
            leader_shrink_isr_ctr=ctrs.leader_shrink_isr_ctr + 1), ctrs)
        n.write(self, t)
        may_time_out = s.aux_ctrs.leader_shrink_isr_ctr < self.LeaderShrinkIsrLimit
        to_ok = where(may_time_out, all_of(timed_out, lambda c: cur.has(c)), to == 0)
        return ((s.broker_state[b].status == RUNNING)
                & not_(s.partition_pending_ap[b].epoch > pm.partition_epoch)
                & (s.partition_status[b] == LEADER) & to_ok & (proposed != cur) & avoid)

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1), nl=Brokers)
    def ReceiveAlterPartitionRequest(self, s: Any, t: Any, b: int, k: int, nl: int) -> Any:
        m = s.m_apreq.at(k)
        if _off(t, (k <= s.m_apreq.len()) & (m.source == b)):
            return np.False_
        n = _Next(self, s)
        md = s.con_partition_metadata
        error = self._validate_ap(s, b, m)
        final_replicas = md.replicas - md.removing
        final_isr = m.isr - md.removing
        in_progress = not_(md.adding.is_empty()) | not_(md.removing.is_empty())
        complete = (in_progress & (md.adding <= final_isr)
                    & (final_isr.size() >= self.MinISR))
        replicas = where(complete, final_replicas, md.replicas)
        isr = where(complete, final_isr, m.isr)
        le = where(complete, md.leader_epoch + 1, md.leader_epoch)
        pe = md.partition_epoch + 1
        adding = where(complete, md.adding - md.adding, md.adding)
        removing = where(complete, md.removing - md.removing, md.removing)
        ok = error == APErr.Nil
        elr = self._ap_elr(s, complete, final_isr, final_replicas, m.isr)
        self._apply_change(n, ok, replicas, nl, isr, le, pe, adding, removing, elr)
        resp_t = s.m_apresp.type.elem
        good = resp_t.value_of({"dest": b, "error": APErr.Nil, "replicas": replicas,
                                "isr": isr, "leader": nl, "leader_epoch": le,
                                "partition_epoch": pe, "request": m})
        bad = resp_t.zero().with_fields(dest=b, error=error, request=m)
        self._reply(n, "apreq", m, "apresp", where(ok, good, bad))
        n.write(self, t)
        nl_ok = where(ok, isr.has(nl) & implies_(isr.has(md.leader), nl == md.leader),
                      nl == 1)
        return (k <= s.m_apreq.len()) & (m.source == b) & nl_ok

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1))
    def ReceiveAlterPartitionResponse(self, s: Any, t: Any, b: int, k: int) -> Any:
        m = s.m_apresp.at(k)
        pm = s.partition_metadata[b]
        pend = s.partition_pending_ap[b]
        if _off(t, (k <= s.m_apresp.len()) & (m.dest == b) & (pend.epoch > pm.partition_epoch)
                & (s.partition_status[b] == LEADER)):
            return np.False_
        n = _Next(self, s)
        ok = m.error == APErr.Nil
        done = pm.with_fields(replicas=m.replicas, isr=m.isr, maximal_isr=m.isr,
                              leader=m.leader, leader_epoch=m.leader_epoch,
                              partition_epoch=m.partition_epoch)
        back = pm.with_fields(maximal_isr=pm.isr)
        ps = where(ok, done, back)
        n.v["partition_metadata"][b] = ps
        self._hwm_on_change(s, n, b, ps, True)
        self._reset_pending_ap(n, b, True)
        self._discard(n, "apresp", m)
        n.write(self, t)
        pend = s.partition_pending_ap[b]
        return ((k <= s.m_apresp.len()) & (m.dest == b)
                & (s.broker_state[b].status == RUNNING) & (s.partition_status[b] == LEADER)
                & (pend.epoch > pm.partition_epoch) & pend.has & (pend.request == m.request)
                & implies_(ok, (m.partition_epoch > pm.partition_epoch)
                           & (m.leader_epoch == pm.leader_epoch)))

    @action(add=lambda self: range(0, 1 << self.BrokerCount),
            rem=lambda self: range(0, 1 << self.BrokerCount), nl=Brokers)
    def PerformPartitionReassignment(self, s: Any, t: Any, add: int, rem: int, nl: int
                                     ) -> Any:
        adding_s, removing_s = _mask(add, self.Brokers), _mask(rem, self.Brokers)
        if not adding_s and not removing_s:
            return False
        md = s.con_partition_metadata
        in_progress = not_(md.adding.is_empty()) | not_(md.removing.is_empty())
        if _off(t, (s.aux_ctrs.reassignment_ctr < self.ReassignmentLimit) & not_(in_progress)):
            return np.False_
        n = _Next(self, s)
        none = md.isr - md.isr
        adding = none
        for c in adding_s:
            adding = adding.with_(c)
        removing = none
        for c in removing_s:
            removing = removing.with_(c)
        valid = ((md.replicas.size() + len(adding_s) - len(removing_s) >= self.MinISR)
                 & all_of(adding_s, lambda r: not_(md.replicas.has(r)))
                 & all_of(removing_s, lambda r: md.replicas.has(r)))
        grow = md.replicas | adding
        final_replicas = grow - removing
        final_isr = md.isr - removing
        complete = ((adding <= final_isr) & (final_isr.size() >= self.MinISR)
                    & (final_replicas.size() > 0))
        replicas = where(complete, final_replicas, grow)
        isr = where(complete, final_isr, md.isr)
        le = where(complete, md.leader_epoch + 1, md.leader_epoch)
        self._apply_change(n, True, replicas, nl, isr, le, md.partition_epoch + 1,
                           where(complete, none, adding), where(complete, none, removing),
                           self._reassign_elr(s, complete, final_isr, final_replicas))
        n.v["aux_ctrs"] = s.aux_ctrs.with_fields(
            reassignment_ctr=s.aux_ctrs.reassignment_ctr + 1)
        n.write(self, t)
        in_progress = not_(md.adding.is_empty()) | not_(md.removing.is_empty())
        return ((s.aux_ctrs.reassignment_ctr < self.ReassignmentLimit) & not_(in_progress)
                & valid & isr.has(nl) & implies_(isr.has(md.leader), nl == md.leader))

    def _converged(self, s: Any, leader: int, follower: int) -> Any:
        pl, pf = s.partition_data[leader], s.partition_data[follower]
        rs = s.partition_replica_state[leader][follower]
        return ((pl.leo == pf.leo) & (pl.hwm == pf.hwm) & (rs.leo == pf.leo)
                & (rs.broker_epoch == s.broker_state[follower].broker_epoch))

    @action(b=Brokers, to=Brokers)
    def SendFetchRequest(self, s: Any, t: Any, b: int, to: int) -> Any:
        if b == to:
            return False
        f = s.broker_fetchers[b][to]
        g = ((s.broker_state[b].status == RUNNING) & f.has & not_(f.pending)
             & (s.partition_metadata[b].leader == to) & not_(self._converged(s, to, b)))
        if _off(t, g):
            return g
        n = _Next(self, s)
        n.v["m_freq"] = _sadd(s.m_freq, {
            "source": b, "dest": to, "broker_epoch": s.broker_state[b].broker_epoch,
            "leader_epoch": s.partition_metadata[b].leader_epoch,
            "fetch_offset": f.fetch_offset, "last_fetched_epoch": f.last_fetched_epoch})
        n.v["broker_fetchers"][b][to] = f.with_fields(pending=True, delayed=False)
        n.write(self, t)
        return ((s.broker_state[b].status == RUNNING) & f.has & not_(f.pending)
                & (s.partition_metadata[b].leader == to) & not_(self._converged(s, to, b)))

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1), src=Brokers)
    def ReceiveFetchRequest(self, s: Any, t: Any, b: int, k: int, src: int) -> Any:
        m = s.m_freq.at(k)
        g = ((k <= s.m_freq.len()) & (m.dest == b) & (m.source == src)
             & (s.broker_state[b].status == RUNNING))
        if _off(t, g):
            return g
        n = _Next(self, s)
        pm = s.partition_metadata[b]
        pd = s.partition_data[b]
        le_epoch, le_offset = self._last_offset_for_epoch(s, b, m.last_fetched_epoch, True)
        stale = (s.partition_status[b] != LEADER) | (pm.leader_epoch != m.leader_epoch)
        diverging = not_(stale) & ((le_epoch < m.last_fetched_epoch)
                                   | (le_offset < m.fetch_offset))
        okc = not_(stale) & not_(diverging)
        rs = {c: s.partition_replica_state[b][c] for c in self.Brokers}
        rs[src] = rs[src].with_fields(leo=m.fetch_offset, broker_epoch=m.broker_epoch)
        old = pd.hwm
        new = self._commit_offset(s, b, pm.maximal_isr, pd.leo, rs) + 1
        new = where(self._safe_hwm(pm.isr), new, old)
        self._maybe_advance_hwm(s, n, b, old, new, True, okc)
        self._set(n, "partition_replica_state", rs[src], okc, b, src)
        err = where(pm.leader_epoch < m.leader_epoch, FErr.UnknownLeaderEpoch,
                    where(pm.leader_epoch > m.leader_epoch, FErr.FencedLeaderEpoch,
                          FErr.NotLeaderOrFollower))
        rt = s.m_fresp.type.elem
        base = rt.zero().with_fields(source=b, dest=src, leader_epoch=pm.leader_epoch,
                                     fetch_offset=m.fetch_offset)
        r_stale = base.with_fields(error=err, hwm=pd.hwm)
        r_div = base.with_fields(hwm=pd.hwm, div=True, div_epoch=le_epoch,
                                 div_offset=le_offset)
        recs = rt.fields["records"].zero()
        recs = where(m.fetch_offset < pd.leo, recs.append(pd.log.at(m.fetch_offset)), recs)
        r_ok = base.with_fields(hwm=where(new > old, new, old), records=recs)
        self._reply(n, "freq", m, "fresp", where(stale, r_stale, where(diverging, r_div, r_ok)))
        n.write(self, t)
        return ((k <= s.m_freq.len()) & (m.dest == b) & (m.source == src)
                & (s.broker_state[b].status == RUNNING))

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1), src=Brokers)
    def ReceiveFetchResponse(self, s: Any, t: Any, b: int, k: int, src: int) -> Any:
        m = s.m_fresp.at(k)
        f = s.broker_fetchers[b][src]
        g = ((k <= s.m_fresp.len()) & (m.dest == b) & (m.source == src)
             & (s.broker_state[b].status == RUNNING) & f.pending)
        if _off(t, g):
            return g
        n = _Next(self, s)
        pd = s.partition_data[b]
        mismatch: Any = False
        if self.check_fetch_offset:
            mismatch = mismatch | (f.fetch_offset != m.fetch_offset)
        if self.check_fetch_epoch:
            mismatch = mismatch | (s.partition_metadata[b].leader_epoch != m.leader_epoch)
        noop = not_(f.has) | (f.has & mismatch)
        error = not_(noop) & (m.error != FErr.Nil)
        div = not_(noop) & not_(error) & m.div
        okc = not_(noop) & not_(error) & not_(div)
        # diverging: truncate
        l_epoch, l_offset = self._last_offset_for_epoch(s, b, m.div_epoch, False)
        tp = where(l_epoch != m.div_epoch, l_offset,
                   where(l_offset < m.div_offset, l_offset, m.div_offset))
        trunc_log = where(tp > 1, pd.log.prefix(tp - 1), pd.log.prefix(0))
        trunc = pd.with_fields(log=trunc_log, leo=where(tp > 1, tp, 1))
        t_lfe = where(trunc_log.len() == 0, 0, trunc_log.last().epoch)
        # ok: append
        new_leo = pd.log.len() + m.records.len() + 1
        lfe = where(m.records.len() > 0, m.records.last().epoch, f.last_fetched_epoch)
        grown = where(m.records.len() > 0, pd.log.append(m.records.at(1)), pd.log)
        appended = pd.with_fields(log=grown, leo=new_leo,
                                  hwm=where(m.hwm <= new_leo, m.hwm, pd.hwm))
        self._set(n, "partition_data", trunc, div, b)
        self._set(n, "partition_data", appended, okc, b)
        nf = f.with_fields(pending=False)
        nf = where(error, nf.with_fields(delayed=True), nf)
        nf = where(div, f.with_fields(has=True, fetch_offset=trunc.leo,
                                      last_fetched_epoch=t_lfe, delayed=False,
                                      pending=False), nf)
        nf = where(okc, f.with_fields(has=True, fetch_offset=new_leo, last_fetched_epoch=lfe,
                                      delayed=False, pending=False), nf)
        n.v["broker_fetchers"][b][src] = nf
        self._discard(n, "fresp", m)
        n.write(self, t)
        return ((k <= s.m_fresp.len()) & (m.dest == b) & (m.source == src)
                & (s.broker_state[b].status == RUNNING) & f.pending)

    @action(b=Brokers, v=lambda self: range(1, self.NValues + 1))
    def WriteRecordToLeader(self, s: Any, t: Any, b: int, v: int) -> Any:
        pm = s.partition_metadata[b]
        g = (not_(s.inv_sent.has(v)) & (s.broker_state[b].status == RUNNING)
             & (s.partition_status[b] == LEADER)
             & (pm.maximal_isr.size() >= self.MinISR))
        if _off(t, g):
            return g
        n = _Next(self, s)
        pd = s.partition_data[b]
        new_leo = pd.leo + 1
        rec = {"epoch": pm.leader_epoch, "offset": pd.leo, "value": v}
        rs = {c: s.partition_replica_state[b][c] for c in self.Brokers}
        old = pd.hwm
        new = self._commit_offset(s, b, pm.maximal_isr, new_leo, rs) + 1
        new = where(self._safe_hwm(pm.isr), new, old)
        n.v["partition_data"][b] = pd.with_fields(leo=new_leo, hwm=where(new > old, new, old),
                                                  log=pd.log.append(rec))
        self._update_hwm_inv(s, n, b, old, new, True, new > old)
        n.v["inv_sent"] = s.inv_sent.with_(v)
        self._set(n, "aux_flo", pd.leo, s.aux_flo[b] == 0, b)
        n.write(self, t)
        return (not_(s.inv_sent.has(v)) & (s.broker_state[b].status == RUNNING)
                & (s.partition_status[b] == LEADER)
                & (pm.maximal_isr.size() >= self.MinISR))

    def _shutdown(self, s: Any, t: Any, b: int, c: int, unclean: bool, pre: Any,
                  keep_epoch: Any = False) -> Any:
        """The shutdowns' common part; ``keep_epoch``: the broker writes its broker
        epoch to file (KIP-966's clean shutdown)."""
        bs = s.broker_state[b].status
        online = (bs != BStatus.OFFLINE_CLEAN) & (bs != BStatus.OFFLINE_DIRTY)
        if _off(t, online & pre):
            return np.False_
        n = _Next(self, s)
        st = BStatus.OFFLINE_DIRTY if unclean else BStatus.OFFLINE_CLEAN
        n.v["broker_state"][b] = s.broker_state[b].with_fields(
            status=st, broker_epoch=where(keep_epoch, s.broker_state[b].broker_epoch, 0),
            incarnation_id=0, registered=False)
        self._drop_fetch_sessions(s, n, b)
        n.v["partition_status"][b] = PNIL
        pd = s.partition_data[b]
        if unclean:
            n.v["partition_data"][b] = pd.with_fields(log=pd.log.prefix(0), hwm=1, leo=1)
            n.v["partition_leso"][b] = 0
        self._reset_followers(n, b, True)
        self._reset_pending_ap(n, b, True)
        ctrs = s.aux_ctrs
        if unclean:
            n.v["aux_ctrs"] = ctrs.with_fields(
                unclean_shutdown_ctr=ctrs.unclean_shutdown_ctr + 1)
        else:
            n.v["aux_ctrs"] = ctrs.with_fields(clean_shutdown_ctr=ctrs.clean_shutdown_ctr + 1)
        self._fail_pending(s, n, b, (s.partition_status[b] == LEADER) & (pd.hwm < pd.leo))
        g = self._fenced(s, n, b, c)
        n.v["con_broker_reg"][b] = s.con_broker_reg[b].with_fields(status=FENCED)
        n.v["aux_flo"][b] = 0
        n.write(self, t)
        return online & pre & g

    # ---------------------------------------------------------------- invariants
    def _non_stale_leader(self, s: Any, b: int) -> Any:
        return ((s.partition_status[b] == LEADER)
                & (s.partition_metadata[b].leader_epoch
                   == s.con_partition_metadata.leader_epoch))

    @invariant
    def LeaderCompletenessProperty(self, s: Any) -> Any:
        md = s.con_partition_metadata

        def holds(b: int) -> Any:
            pd = s.partition_data[b]
            return ((pd.leo >= s.inv_true_hwm)
                    & all_of(range(1, self.NValues + 1), lambda v: implies_(
                        s.inv_pos_acked.has(v),
                        any_of(range(1, self.NValues + 1), lambda o: (
                            (o <= pd.log.len()) & (pd.log.at(o).value == v))))))
        return implies_(s.inv_true_hwm > 1, all_of(self.Brokers, lambda b: implies_(
            (md.leader == b) & (s.broker_state[b].status == RUNNING), holds(b))))

    @invariant
    def LeaderCandidateCompletenessProperty(self, s: Any) -> Any:
        isr = s.con_partition_metadata.isr
        return implies_(s.inv_true_hwm > 1, not_(any_of(self.Brokers, lambda b: (
            isr.has(b) & (s.partition_data[b].leo < s.inv_true_hwm)
            & (s.broker_state[b].status == RUNNING)))))

    @invariant
    def ReplicationQuorumSupersetProperty(self, s: Any) -> Any:
        def holds(b: int) -> Any:
            pm = s.partition_metadata[b]
            pending = s.partition_pending_ap[b].epoch > pm.partition_epoch
            return (implies_(not_(pending), pm.maximal_isr == pm.isr)
                    & (s.con_partition_metadata.isr <= pm.maximal_isr))
        return all_of(self.Brokers, lambda b: implies_(self._non_stale_leader(s, b),
                                                       holds(b)))

    @invariant
    def LogMatchingProperty(self, s: Any) -> Any:
        def bad(o: int, b1: int, b2: int) -> Any:
            p1, p2 = s.partition_data[b1], s.partition_data[b2]
            return ((p1.leo > o) & (p2.leo > o) & (p1.hwm > o) & (p2.hwm > o)
                    & (p1.log.at(o).value != p2.log.at(o).value))
        return not_(any_of(range(1, self.NValues + 1), lambda o: any_of(
            self.Brokers, lambda b1: any_of(self.Brokers, lambda b2: bad(o, b1, b2)))))

    @invariant
    def MetadataLogMatchingProperty(self, s: Any) -> Any:
        log = s.con_metadata_log
        return all_of(range(1, self.MaxMetadataLog + 1), lambda o: implies_(
            o <= log.len(), not_(any_of(self.Brokers, lambda b: (
                (s.broker_metadata_log[b].len() >= o)
                & (s.broker_metadata_log[b].at(o) != log.at(o)))))))

    @invariant
    def NoCommittedRecordLostGlobally(self, s: Any) -> Any:
        return all_of(range(1, self.NValues + 1), lambda v: implies_(
            s.inv_pos_acked.has(v), any_of(self.Brokers, lambda b: any_of(
                range(1, self.NValues + 1), lambda o: (
                    (o <= s.partition_data[b].log.len())
                    & (s.partition_data[b].log.at(o).value == v))))))

    @invariant
    def ConsistentReadProperty(self, s: Any) -> Any:
        c = s.inv_consumed

        def holds(b: int) -> Any:
            log = s.partition_data[b].log
            return all_of(range(1, self.NValues + 1), lambda o: implies_(
                o <= c.len(), (o <= log.len()) & (log.at(o) == c.at(o))))
        return all_of(self.Brokers, lambda b: implies_(self._non_stale_leader(s, b),
                                                       holds(b)))


    # -- the spec-bug invariants of the properties module (not in the author's cfg)
    @invariant
    def ValidBrokerState(self, s: Any) -> Any:
        return all_of(self.Brokers, lambda b: implies_(
            s.broker_state[b].status == RUNNING, s.broker_state[b].registered))

    @invariant
    def ValidReplicaState(self, s: Any) -> Any:
        def holds(b: int) -> Any:
            pd = s.partition_data[b]
            return (implies_(s.partition_status[b] == LEADER,
                             s.partition_metadata[b].leader == b)
                    & (pd.leo == pd.log.len() + 1)
                    & all_of(range(1, self.NValues + 1), lambda o: implies_(
                        o <= pd.leo - 1, pd.log.at(o).offset == o)))
        return all_of(self.Brokers, holds)

    @invariant
    def ValidFetcherState(self, s: Any) -> Any:
        def has(b: int, c: int) -> Any:
            return s.broker_fetchers[b][c].has

        def holds(b: int) -> Any:
            others = [c for c in self.Brokers if c != b]
            two = any_of(others, lambda c1: any_of(others, lambda c2: (
                (c1 != c2) & has(b, c1) & has(b, c2))))
            some = any_of(others, lambda c: has(b, c))
            st = s.partition_status[b]
            return not_(two) & implies_(st == LEADER, not_(some)) & implies_(
                st == FOLLOWER, some)
        return all_of(self.Brokers, holds)

    @invariant
    def ValidControllerState(self, s: Any) -> Any:
        md = s.con_partition_metadata

        def bad(b: int) -> Any:
            st = s.con_broker_reg[b].status
            return (((st == FENCED) & s.con_unfenced.has(b))
                    | ((st == UNFENCED) & not_(s.con_unfenced.has(b))))
        fenced_in_isr = any_of(self.Brokers, lambda b: (
            md.replicas.has(b) & (s.con_broker_reg[b].status == FENCED) & md.isr.has(b)))
        return (not_(any_of(self.Brokers, bad))
                & implies_(md.isr.size() > 1, not_(fenced_in_isr))
                & not_(md.isr.is_empty()))


class KafkaReplication(_Replication):
    """The v3.5 model (``kafka_replication_v3_5.tla``) on small constants; see the module
    docstring for the mapping and the translation."""

    CleanShutdownLimit = Const(0, min=0)
    UncleanShutdownLimit = Const(0, min=0)
    AvoidLastReplicaStanding = Const(True)

    @action(b=Brokers, c=Brokers)
    def UncleanShutdown(self, s: Any, t: Any, b: int, c: int) -> Any:
        isr = s.con_partition_metadata.isr
        lrs = isr.has(b) & (isr.size() == 1)
        if not self.AvoidLastReplicaStanding:
            lrs = np.False_
        pre = (s.aux_ctrs.unclean_shutdown_ctr < self.UncleanShutdownLimit) & not_(lrs)
        return self._shutdown(s, t, b, c, True, pre)

    @action(b=Brokers, c=Brokers)
    def CleanShutdown(self, s: Any, t: Any, b: int, c: int) -> Any:
        pre = s.aux_ctrs.clean_shutdown_ctr < self.CleanShutdownLimit
        return self._shutdown(s, t, b, c, False, pre)


class KafkaReplicationKip966(_Replication):
    """The KIP-966 model (``kafka_replication_kip_966.tla``, Eligible Leader Replicas) on
    small constants; see the module docstring for what changes from v3.5."""

    NoDataLossShutdownLimit = Const(0, min=0)
    DataLossShutdownLimit = Const(0, min=0)

    # the metadata records carry the ELR and the last known ELR
    con_partition_metadata = MdRecK
    con_metadata_log = Seq(MdRecK, MaxMetadataLog)
    broker_metadata_log = Array(Brokers, Seq(MdRecK, MaxMetadataLog))
    # a registration request carries the broker epoch on file
    m_regreq = Seq(RegReqK, MsgCap)
    d_regreq = Seq(RegReqK, DiscardCap)

    def _md_extra(self) -> dict[str, Any]:
        return {"elr": set(), "last_known_elr": set()}

    def _safe_hwm(self, isr: Any) -> Any:
        return isr.size() >= self.MinISR

    def _update_elr(self, s: Any, proposed_isr: Any, replicas: Any) -> Any:
        """UpdateElrOnIsrOrReplicaChange(proposed_isr, replicas)."""
        md = s.con_partition_metadata
        removed = (md.isr & replicas) - proposed_isr
        return where(proposed_isr.size() >= self.MinISR, removed - removed,
                     (md.elr & replicas) | removed)

    def _ap_elr(self, s: Any, complete: Any, final_isr: Any, final_replicas: Any,
                isr: Any) -> Any:
        md = s.con_partition_metadata
        return where(complete, self._update_elr(s, final_isr, final_replicas),
                     self._update_elr(s, isr, md.replicas))

    def _reassign_elr(self, s: Any, complete: Any, final_isr: Any, final_replicas: Any
                      ) -> Any:
        return where(complete, self._update_elr(s, final_isr, final_replicas),
                     s.con_partition_metadata.elr)

    def _elr_fields(self, n: _Next, isr: Any, replicas: Any, elr: Any) -> dict[str, Any]:
        md = n.s.con_partition_metadata
        lke = where(isr.size() >= self.MinISR, md.last_known_elr - md.last_known_elr,
                    md.last_known_elr | (replicas & (md.elr - elr)))
        return {"elr": elr, "last_known_elr": lke}

    def _broker_change_elr(self, s: Any, n: _Next, new_isr: Any, new_elr: Any, new_unf: Any,
                           c: int, cond: Any) -> Any:
        """MaybeUpdatePartitionOnBrokerChange(new_isr, new_elr, new_unfenced) with
        candidate ``c``; returns the guard on ``c`` (1 unless arm 3 or 4 picks one)."""
        md = s.con_partition_metadata
        elr_cands = new_elr & new_unf
        no_change = (((md.leader == 0) & new_isr.is_empty() & elr_cands.is_empty())
                     | new_isr.has(md.leader))
        arm2 = no_change & ((new_isr != md.isr) | (new_elr != md.elr))
        arm3 = not_(no_change) & not_(new_isr.is_empty())
        arm4 = not_(no_change) & new_isr.is_empty() & not_(elr_cands.is_empty())
        arm5 = not_(no_change) & new_isr.is_empty() & elr_cands.is_empty()
        self._apply_change(n, cond & arm2, md.replicas, md.leader, new_isr,
                           md.leader_epoch, md.partition_epoch + 1, md.adding, md.removing,
                           new_elr)
        self._apply_change(n, cond & arm3, md.replicas, c, new_isr, md.leader_epoch + 1,
                           md.partition_epoch + 1, md.adding, md.removing, new_elr)
        self._apply_change(n, cond & arm4, md.replicas, c, new_isr.with_(c),
                           md.leader_epoch + 1, md.partition_epoch + 1, md.adding,
                           md.removing, new_elr.without(c))
        self._apply_change(n, cond & arm5, md.replicas, 0, new_isr, md.leader_epoch + 1,
                           md.partition_epoch + 1, md.adding, md.removing, new_elr)
        return where(cond & arm3, new_isr.has(c),
                     where(cond & arm4, elr_cands.has(c), c == 1))

    def _fenced(self, s: Any, n: _Next, b: int, c: int) -> Any:
        """HandleBrokerFenced(b): the ISR may become empty."""
        md = s.con_partition_metadata
        new_isr = md.isr.without(b)
        new_unf = s.con_unfenced.without(b)
        g = self._broker_change_elr(s, n, new_isr, self._update_elr(s, new_isr, md.replicas),
                                    new_unf, c, True)
        n.v["con_unfenced"] = new_unf
        return g

    def _unfenced(self, s: Any, n: _Next, b: int, c: int) -> Any:
        """HandleBrokerUnfenced(b)."""
        md = s.con_partition_metadata
        new_unf = s.con_unfenced.with_(b)
        g = self._broker_change_elr(s, n, md.isr, md.elr, new_unf, c, md.leader == 0)
        n.v["con_unfenced"] = new_unf
        return g

    @action(b=Brokers)
    def BrokerStart(self, s: Any, t: Any, b: int) -> Any:
        st = s.broker_state[b].status
        g = (st == BStatus.OFFLINE_CLEAN) | (st == BStatus.OFFLINE_DIRTY)
        if _off(t, g):
            return g
        n = _Next(self, s)
        inc = s.aux_ctrs.incarn_ctr
        epoch = s.broker_state[b].broker_epoch  # the broker epoch on file (0: none)
        n.v["broker_state"][b] = s.broker_state[b].with_fields(
            status=STARTING, broker_epoch=epoch, incarnation_id=inc, registered=False)
        n.v["partition_status"][b] = PNIL
        n.v["m_regreq"] = _sadd(s.m_regreq, {"source": b, "broker_epoch": epoch,
                                             "incarnation_id": inc})
        n.v["aux_ctrs"] = s.aux_ctrs.with_fields(incarn_ctr=inc + 1)
        n.write(self, t)
        return g

    @action(b=Brokers, k=lambda self: range(1, self.MsgCap + 1), c=Brokers)
    def ReceiveBrokerRegRequest(self, s: Any, t: Any, b: int, k: int, c: int) -> Any:
        m = s.m_regreq.at(k)
        if _off(t, (k <= s.m_regreq.len()) & (m.source == b)):
            return np.False_
        n = _Next(self, s)
        reg = s.con_broker_reg[b]
        md = s.con_partition_metadata
        epoch = s.aux_broker_epoch + 1
        unclean = m.broker_epoch == 0
        new_unf = s.con_unfenced.with_(b)
        # ProcessUncleanBroker(b) or HandleBrokerUnfenced(b)
        g1 = self._broker_change_elr(s, n, md.isr.without(b), md.elr.without(b), new_unf, c,
                                     unclean)
        g2 = self._broker_change_elr(s, n, md.isr, md.elr, new_unf, c,
                                     not_(unclean) & (md.leader == 0))
        n.v["con_unfenced"] = new_unf
        n.v["con_broker_reg"][b] = reg.with_fields(
            status=UNFENCED, broker_epoch=epoch, incarnation_id=m.incarnation_id)
        self._reply(n, "regreq", m, "regresp", {
            "dest": b, "broker_epoch": epoch, "incarnation_id": m.incarnation_id,
            "metadata_offset": s.con_metadata_log.len()})
        n.v["aux_broker_epoch"] = epoch
        n.write(self, t)
        return ((k <= s.m_regreq.len()) & (m.source == b)
                & ((reg.status == FENCED) | (reg.incarnation_id == m.incarnation_id))
                & where(unclean, g1, g2))

    @action(b=Brokers, c=Brokers)
    def DataLossShutdown(self, s: Any, t: Any, b: int, c: int) -> Any:
        pre = s.aux_ctrs.unclean_shutdown_ctr < self.DataLossShutdownLimit
        return self._shutdown(s, t, b, c, True, pre)

    @action(b=Brokers, c=Brokers, clean=lambda self: (False, True))
    def NoDataLossShutdown(self, s: Any, t: Any, b: int, c: int, clean: bool) -> Any:
        pre = s.aux_ctrs.clean_shutdown_ctr < self.NoDataLossShutdownLimit
        return self._shutdown(s, t, b, c, False, pre, keep_epoch=np.bool_(clean))

    # -- the properties that KIP-966 states differently, and its own
    @invariant
    def LeaderCandidateCompletenessProperty(self, s: Any) -> Any:
        md = s.con_partition_metadata
        return implies_(s.inv_true_hwm > 1, not_(any_of(self.Brokers, lambda b: (
            (md.isr.has(b) | md.elr.has(b)) & (s.partition_data[b].leo < s.inv_true_hwm)
            & (s.broker_state[b].status == RUNNING)))))

    @invariant
    def ReplicationQuorumSupersetProperty(self, s: Any) -> Any:
        md = s.con_partition_metadata

        def holds(b: int) -> Any:
            pm = s.partition_metadata[b]
            pending = s.partition_pending_ap[b].epoch > pm.partition_epoch
            return (implies_(not_(pending), pm.maximal_isr == pm.isr)
                    & implies_(pm.isr.size() >= self.MinISR,
                               (md.isr <= pm.maximal_isr) & (md.elr <= pm.maximal_isr)))
        return all_of(self.Brokers, lambda b: implies_(self._non_stale_leader(s, b),
                                                       holds(b)))

    @invariant
    def MinIsrRecoveryQuorum(self, s: Any) -> Any:
        md = s.con_partition_metadata
        return implies_(md.isr.is_empty() & md.elr.is_empty(),
                        md.last_known_elr.size() == self.MinISR)

    @invariant
    def ValidControllerState(self, s: Any) -> Any:
        md = s.con_partition_metadata

        def bad(b: int) -> Any:
            st = s.con_broker_reg[b].status
            return (((st == FENCED) & s.con_unfenced.has(b))
                    | ((st == UNFENCED) & not_(s.con_unfenced.has(b))))
        fenced_in_isr = any_of(self.Brokers, lambda b: (
            md.replicas.has(b) & (s.con_broker_reg[b].status == FENCED) & md.isr.has(b)))
        return not_(any_of(self.Brokers, bad)) & not_(fenced_in_isr)

    @invariant
    def ValidControllerIsrAndElr(self, s: Any) -> Any:
        md = s.con_partition_metadata
        return ((md.isr <= md.replicas) & (md.elr <= md.replicas)
                & (md.elr & md.isr).is_empty()
                & implies_(md.isr.size() >= self.MinISR, md.elr.is_empty()))


class _Liveness:
    """The models' fairness (``Liveness``) and liveness properties, for the ``*Live``
    classes (the safety classes stay free of them: their checks, and the state graph a
    liveness check keeps, are not wanted on the big configurations)."""

    #: the actions of the models' ``Liveness`` (``\\A b: WF_vars(A(b))``); each one's
    #: witnesses (message slot, candidate, ...) are TLA+'s ``\\E`` inside the action, so
    #: the condition of ``A(b)`` is one weakly fair family per broker
    fair_actions: tuple[str, ...] = (
        "BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate",
        "SendAlterPartitionRequest", "ReceiveAlterPartitionResponse", "SendFetchRequest",
        "ReceiveFetchRequest", "ReceiveFetchResponse", "ReceiveBrokerRegRequest",
        "ReceiveAlterPartitionRequest", "UnfenceBroker")

    def fairness(self) -> dict[str, str]:
        """``Liveness`` of the models: for each broker ``b`` and each action of
        :attr:`fair_actions`, ``WF_vars(\\E w: A(b, w))`` (its instances of that ``b`` as
        one action)."""
        table: dict[str, str] = {}
        for name in self.fair_actions:
            for b in self.Brokers:
                labels = list(dict.fromkeys(
                    label_of(a, branch=False) for a in self.actions
                    if a.decl.name == name and dict(a.params)["b"] == b))
                if len(labels) == 1:
                    table[labels[0]] = "weak"
                elif labels:
                    table[" | ".join(labels)] = "weak-family"
        return table

    def _falsum(self, s: Any) -> Any:
        return s.inv_true_hwm != s.inv_true_hwm

    def _runs(self, b: int) -> Any:
        def prop(self: Any, s: Any) -> Any:
            if b > self.BrokerCount:
                return self._falsum(s), self._falsum(s)
            return (s.broker_state[b].status == STARTING,
                    (s.broker_state[b].status == RUNNING)
                    & (s.con_broker_reg[b].status == UNFENCED))
        return prop

    def _unfenced_eventually(self, b: int) -> Any:
        def prop(self: Any, s: Any) -> Any:
            if b > self.BrokerCount:
                return self._falsum(s), self._falsum(s)
            return (s.con_broker_reg[b].status == FENCED,
                    s.con_broker_reg[b].status == UNFENCED)
        return prop

    def _write_answered(self, v: int) -> Any:
        def prop(self: Any, s: Any) -> Any:
            if v > self.NValues:
                return self._falsum(s), self._falsum(s)
            return s.inv_sent.has(v), s.inv_pos_acked.has(v) | s.inv_neg_acked.has(v)
        return prop

    def _fully_replicated(self, v: int) -> Any:
        def prop(self: Any, s: Any) -> Any:
            if v > self.NValues:
                return self._falsum(s), self._falsum(s)
            reps = s.con_partition_metadata.replicas
            return s.inv_pos_acked.has(v), all_of(self.Brokers, lambda b: implies_(
                reps.has(b), any_of(range(1, self.NValues + 1), lambda o: (
                    (o <= s.partition_data[b].log.len())
                    & (s.partition_data[b].log.at(o).value == v)))))
        return prop

    for _i in (1, 2, 3):
        locals()[f"EventuallyRuns{_i}"] = leads_to(_runs(None, _i))
        locals()[f"EventuallyUnfenced{_i}"] = leads_to(_unfenced_eventually(None, _i))
    for _i in (1, 2):
        locals()[f"EventuallyWriteIsAcceptedOrRejected{_i}"] = leads_to(_write_answered(None, _i))
        locals()[f"EventuallyAcknowledgedValueFullyReplicated{_i}"] = leads_to(
            _fully_replicated(None, _i))
    del _i

    @always_eventually
    def EventuallyMetadataConverges(self, s: Any) -> Any:
        md = s.con_partition_metadata
        log = s.con_metadata_log

        def converged(b: int) -> Any:
            pm = s.partition_metadata[b]
            same = ((pm.isr == md.isr) & (pm.leader == md.leader)
                    & (pm.leader_epoch == md.leader_epoch)
                    & (pm.partition_epoch == md.partition_epoch))
            bml = s.broker_metadata_log[b]
            pending = any_of(range(1, self.MaxMetadataLog + 1), lambda o: (
                (o > bml.len()) & (o <= log.len()) & self._needs_action(s, b, log.at(o))))
            return (same | ((s.partition_status[b] == FOLLOWER) & not_(pending))
                    | ((s.partition_status[b] == PNIL) & not_(md.replicas.has(b))))
        return all_of(self.Brokers, converged)

    @leads_to
    def EventuallyReassignmentCompletes(self, s: Any) -> Any:
        md = s.con_partition_metadata
        return (not_(md.removing.is_empty()),
                md.adding.is_empty() & md.removing.is_empty())


class KafkaReplicationLive(_Liveness, KafkaReplication):
    """The v3.5 model under ``LivenessSpec``: its fairness and liveness properties."""


class KafkaReplicationKip966Live(_Liveness, KafkaReplicationKip966):
    """The KIP-966 model under ``LivenessSpec``: its fairness and liveness properties."""


#: the author's ``VIEW view`` (``<< con_vars, broker_vars, part_vars, NetworkView,
#: inv_vars >>``, ``NetworkView == << messages >>``): every variable but
#: ``messages_discard`` (the ``d_*``) and ``aux_vars`` (the ``aux_*``)
VIEW = ("con_unfenced", "con_broker_reg", "con_partition_metadata", "con_metadata_log",
        "broker_state", "broker_fetchers", "broker_metadata_log",
        "partition_status", "partition_metadata", "partition_data", "partition_leso",
        "partition_replica_state", "partition_pending_ap",
        "inv_sent", "inv_pos_acked", "inv_neg_acked", "inv_true_hwm", "inv_consumed",
        "m_regreq", "m_regresp", "m_apreq", "m_apresp", "m_freq", "m_fresp")


class KafkaReplicationView(KafkaReplication):
    """The v3.5 model with the author's ``VIEW view`` (:data:`VIEW`): states that differ
    only in the processed messages or the auxiliary variables are one state, as for TLC
    on the author's cfg (``docs/view.md``)."""

    view = VIEW


class KafkaReplicationKip966View(KafkaReplicationKip966):
    """The KIP-966 model with the author's ``VIEW view`` (:data:`VIEW`)."""

    view = VIEW


class _Now:
    """The current state read as a :class:`_Next` (for helpers that take one)."""

    def __init__(self, s: Any) -> None:
        self.v = {"aux_flo": s.aux_flo}


def implies_(a: Any, b: Any) -> Any:
    return not_(a) | b


# -- bug variants: each turns off one CHECK of the source ----------------------------------
class KafkaReplicationBugNoIncarnationCheck(KafkaReplication):
    """``ReceiveBrokerRegResponse`` without ``broker_state[b].incarnation_id =
    m.incarnation_id`` (CHECK, line 157): a stale registration response is accepted."""

    check_reg_incarnation = False


class KafkaReplicationBugNoEpochBumpRefetch(KafkaReplication):
    """``AddPartitionToFetcher`` without ``leader_epoch > partition_metadata[b].leader_epoch``
    (CHECK, line 281): a follower of the same leader in a new epoch keeps its fetch state."""

    check_fetcher_epoch_bump = False


class KafkaReplicationBugNoOutOfSyncReset(KafkaReplication):
    """``BecomeLeaderInNewEpoch`` of a re-elected leader without
    ``ResetFollowerStateOfAllButISR`` (CHECK, line 346): it trusts the LEOs it learnt in an
    older leader epoch."""

    check_reset_out_of_sync = False


class KafkaReplicationBugIsrJoinUnfetched(KafkaReplication):
    """``FollowerIsCaughtUp`` without ``follower_leo # Nil`` (CHECK, line 524). In TLA+ the
    next conjunct then compares ``Nil >= HwmOf(b)``, an evaluation error in TLC; here
    ``Nil`` is 0 and the comparison is false, so this variant is the base spec."""

    check_caught_up_fetched = False


class KafkaReplicationBugIsrJoinBelowHwm(KafkaReplication):
    """``FollowerIsCaughtUp`` without ``follower_leo >= HwmOf(b)`` (CHECK, line 526)."""

    check_caught_up_hwm = False


class KafkaReplicationBugIsrJoinBelowLeso(KafkaReplication):
    """``FollowerIsCaughtUp`` without ``follower_leo >= partition_leso[b]`` (CHECK, line
    528)."""

    check_caught_up_leso = False


class KafkaReplicationBugNoFetchOffsetMatch(KafkaReplication):
    """``ReceiveFetchResponse`` without the fetch offset comparison (CHECK, line 1022): a
    response to an older fetch is appended."""

    check_fetch_offset = False


class KafkaReplicationBugNoFetchEpochMatch(KafkaReplication):
    """``ReceiveFetchResponse`` without the leader epoch comparison (CHECK, line 1023)."""

    check_fetch_epoch = False


class KafkaReplicationBugEligibleWithoutEpoch(KafkaReplication):
    """``IsEligibleBroker`` without ``broker_epoch = 0 \\/`` (CHECK, functions line 449):
    existing ISR members, sent with epoch 0, must match their registration epoch."""

    check_isr_epoch_zero = False


class KafkaReplicationBugNoPartitionEpochCheck(KafkaReplication):
    """``ValidateAlterPartitionRequest`` without ``m.partition_epoch =
    con_partition_metadata.partition_epoch`` (CHECK, functions line 459): a stale
    AlterPartition request overwrites a newer ISR."""

    check_ap_partition_epoch = False


#: the CHECK comments of the KIP-966 source (the same ten checks as v3.5's, at these
#: lines): variant suffix -> (the switch it turns off, the line)
KIP966_CHECKS = {
    "NoIncarnationCheck": ("check_reg_incarnation", "kafka_replication_kip_966.tla:197"),
    "NoEpochBumpRefetch": ("check_fetcher_epoch_bump", "kafka_replication_kip_966.tla:331"),
    "NoOutOfSyncReset": ("check_reset_out_of_sync", "kafka_replication_kip_966.tla:396"),
    "IsrJoinUnfetched": ("check_caught_up_fetched", "kafka_replication_kip_966.tla:576"),
    "IsrJoinBelowHwm": ("check_caught_up_hwm", "kafka_replication_kip_966.tla:578"),
    "IsrJoinBelowLeso": ("check_caught_up_leso", "kafka_replication_kip_966.tla:580"),
    "NoFetchOffsetMatch": ("check_fetch_offset", "kafka_replication_kip_966.tla:1146"),
    "NoFetchEpochMatch": ("check_fetch_epoch", "kafka_replication_kip_966.tla:1147"),
    "EligibleWithoutEpoch": ("check_isr_epoch_zero", "kip_966_functions.tla:514"),
    "NoPartitionEpochCheck": ("check_ap_partition_epoch", "kip_966_functions.tla:524"),
}

# -- KIP-966 bug variants: ``Kip966Bug<suffix>`` turns off the CHECK at that line (the
#    same check as ``KafkaReplicationBug<suffix>`` of v3.5, whose docstring says what it is)
for _suffix, (_switch, _line) in KIP966_CHECKS.items():
    _name = f"Kip966Bug{_suffix}"
    globals()[_name] = type(_name, (KafkaReplicationKip966,), {
        _switch: False, "__module__": __name__,
        "__doc__": f"KIP-966 without the CHECK at ``{_line}`` (``{_switch}``); see "
                   f"``KafkaReplicationBug{_suffix}``."})
    __all__.append(_name)
