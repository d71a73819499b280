r"""KRaft metadata propagation (Kafka 4.4): the loader, KIP-866 transactions, the cache.

Source: the seed on Kafka 4.4 metadata propagation (``kraft/seeds/004``: "From
RaftClient callbacks to a published image", "Batch folding & metadata transactions",
"The catch-up gate", "KRaftMetadataCache, the read path", "Failure modes"), following
the outline of this spec in the seed-systems note (§2(c)); where they differ, or the
model needed another shape, it says so below.

Modelled
--------
**The log and its controller.** ``log`` is a ``Seq`` of records ``[kind, key, val]``:
data records (``val`` 0 is "absent": a deleted topic or broker) and the KIP-866
markers BEGIN, END and ABORT. It starts with the committed bootstrap record (the
metadata.version record that "precedes every record", a data record of no modelled
key). ``hwm`` counts the committed records (``Commit``: Raft commits one more).
The active controller appends data records (``Write``) in or out of its transaction
(``Begin``/``End``, with room kept for the END). ``Failover(keep)``: a new controller
takes over with ``log[1..keep]``, ``hwm <= keep``: it holds every committed record
and may lose the uncommitted tail. A transaction open at ``keep`` is dangling
(``mustAbort``) and the new controller writes nothing before ``AbortDangling``
appends its ABORT (the issue's "a controller failover must abort a dangling
transaction").

**The loader** (``MetadataLoader`` + ``MetadataBatchLoader``), per broker, on one
thread: ``Start`` (an empty image, ``catchingUp`` true), ``LearnHwm`` (the Raft
client learns the high-water mark; records are delivered only after),
``Load`` replays the next *committed* record (``handleCommit``) through the
transaction table of 4.3: BEGIN from NO/ENDED/ABORTED -> STARTED, a data record
STARTED -> CONTINUED and ENDED/ABORTED -> NO, END/ABORT from STARTED/CONTINUED; a
BEGIN inside a transaction, an END or ABORT outside one, is a fault ("throws",
``faultHandler``; fatal on a broker: the loader stops). A BEGIN after accumulated
records first emits them (``applyDeltaAndUpdate``; "a delta emitted mid-batch ...
is marked not-aligned"). ``Flush`` is ``maybeFlushBatches`` at the end of a
``handleCommit`` (a batch boundary, after any load): STARTED/CONTINUED publish
nothing, ABORTED "publishes an empty delta built on the unchanged image", NO/ENDED
the accumulated delta; the batch loader then resets to the new image. Each new image
goes through ``maybePublishMetadata``: the loader's image always advances ("stores
the new image into this.image"), the cache only once the catch-up gate is open
(``stillNeedToCatchUp``: the high-water mark unknown, the image "behind
highWaterMark - 1", or no record seen; then it "flips the flag permanently").
``LoadSnapshot(i)`` (``handleLoadSnapshot``): a loader behind gets the snapshot of
a committed offset ``i`` outside any transaction; the image is the current one plus
the snapshot's records, and ``finishSnapshot()`` "generates removal entries for
anything in the old image not present in the snapshot".

**The cache and readers.** ``cache``/``cacheOff``: ``KRaftMetadataCache``'s one
volatile image (``setImage`` swaps it whole). ``Grab``: a request thread "must grab
currentImage once and operate on that snapshot"; ``rd`` is what it works on.

Offsets are 1-based here (record ``i`` is Kafka's offset ``i - 1``), so Kafka's
gate "offset < highWaterMark - 1" is ``imgOff < hwm``, and "no record seen" is
``imgOff < 1`` (offset 1 is the bootstrap data record).

Properties (:mod:`invariants.metadata`): AbortedNeverVisible, PublishedIsCommittedPrefix
(the cache is ``Fold(cacheOff)``, the committed image of a committed offset outside
any transaction; ``Fold(i)`` skips the data records of transactions aborted or
still open at ``i``), CatchUpBeforePublish (action: the first publish is at or above
the high-water mark at ``Start``, the history variable ``startHwm``), ImageMonotonic
(action), Agreement (two caches at one offset are equal; needs ``N=2``),
LoaderNeverFaults, ReaderSeesOneImage (``rd`` is ``Fold(i)`` of some committed
transaction-free ``i``).

Where the seeds disagree, a constant
-------------------------------------
``GateCurrentHwm`` (default True, 4.4: the gate reads ``highWaterMark()`` each time)
or False (KIP-631: catch up to "what the controller's high water mark used to be",
here the one ``LearnHwm`` saw). Both pass every property (507,158 states with False).
The first publish of a loader under False may be below the *current* high-water mark.

Findings
--------
* **The transition table alone publishes an aborted transaction.** A data record
  after ABORT moves the table to NO_TRANSACTION without resetting the delta, and
  NO_TRANSACTION publishes it (as does a BEGIN after ABORT, which emits the
  accumulated delta): when one ``handleCommit`` delivers the ABORT and a later record
  together, the aborted records are published. :class:`KRaftMetadataLiteralAbort`
  (``FlushAtAbort=False``) fails AbortedNeverVisible in 18 states (Begin, Write,
  Failover, AbortDangling, Write, four Commits, the loads, one Flush). The default
  ``FlushAtAbort=True`` assumes the loader flushes after an ABORT before loading
  more; the seed does not say whether Raft ever delivers an ABORT with later
  records in one commit.
* The outline expected NoFlushOnBegin to lose an *ended* transaction; its shortest
  failure loses a plain record written before the BEGIN (it joins the transaction
  in the delta and the abort drops it); SnapshotNoRemovals fails
  PublishedIsCommittedPrefix already with one broker (Agreement needs two, and fails
  then too); LoadUncommitted fails at once (an uncommitted offset is published),
  before any failover.
* Snapshots make Load-and-Flush paths redundant for state counting: every state a
  Flush reaches, a snapshot reaches in fewer steps (``Flush`` adds no new state).

Constants and results
---------------------
Defaults N=1, K=2, V=1, MaxLog=5, MaxFailovers=1, MaxCrashes=0: 263,553 distinct
states, depth 16, about 3 s. ``N=2, MaxLog=4`` (Agreement between two loaders):
837,463 classes with symmetry, depth 19, about 15 s. ``MaxLog=3``: 2,565, depth 10,
the count the brute-force oracle of the tests confirms.

Bug variants, each failing with its own defaults (``tests/test_kraft_metadata.py``
pins the counterexamples): :class:`KRaftMetadataBugNoCatchUpGate` (CatchUpBeforePublish,
6 states), :class:`KRaftMetadataBugPublishInsideTxn` (PublishedIsCommittedPrefix, 8),
:class:`KRaftMetadataBugAbortPublishesDelta` (AbortedNeverVisible, 15),
:class:`KRaftMetadataBugNoFlushOnBegin` (PublishedIsCommittedPrefix, 15),
:class:`KRaftMetadataBugNoAbortOnFailover` (LoaderNeverFaults, 11),
:class:`KRaftMetadataBugSnapshotNoRemovals` (PublishedIsCommittedPrefix, 9),
:class:`KRaftMetadataBugReaderReReads` (ReaderSeesOneImage, 9),
:class:`KRaftMetadataBugLoadUncommitted` (PublishedIsCommittedPrefix, 7).

Liveness
--------
:class:`KRaftMetadataLive` (no symmetry) checks, under weak fairness of Commit, End,
AbortDangling, Start, LearnHwm, Load and Flush (none on Write, Begin, Failover,
LoadSnapshot, Grab, Crash): **EventuallyPublishes** (``up /\ ~fault ~> cacheOff > 0
\/ ~up``, broker 1), **EventuallyCurrent** (``<>[] \A b: up[b] /\ cacheOff[b] =
hwm``) and **DanglingTxnEventuallyAborted** (``mustAbort ~> ~mustAbort``). All hold,
with either gate: the log is bounded, so the writer stops. That a loader slower than
an unbounded writer never passes the current-high-water-mark gate (the outline's
expectation) needs head-relative offsets and is not checked.

Abstracted or left out
----------------------
Record contents (keys with small values stand for topics, brokers, configs);
batches (a record is a batch; a flush may follow any load); publishers other than
the cache, their install order and the catch-up snapshot for new publishers;
``metadata.version`` gating; the time and size triggers of snapshots (any committed,
transaction-free offset ahead of the loader); Raft itself (``hwm`` is one number
every broker eventually learns; a broker's Raft client may lag, which the loader's
own lag covers); the lifecycle manager and heartbeats (``specs/kraft_lifecycle.py``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from invariants.metadata import (
    RecKind,
    aborted_never_visible,
    agreement,
    catch_up_before_publish,
    fold_log,
    image_monotonic,
    loader_never_faults,
    published_is_committed_prefix,
    reader_sees_one_image,
)
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
    Spec,
    action,
    all_of,
    eventually_always,
    leads_to,
    not_,
    where,
)

__all__ = [
    "Txn",
    "KRaftMetadata",
    "KRaftMetadataBugNoCatchUpGate",
    "KRaftMetadataBugPublishInsideTxn",
    "KRaftMetadataBugAbortPublishesDelta",
    "KRaftMetadataBugNoFlushOnBegin",
    "KRaftMetadataBugNoAbortOnFailover",
    "KRaftMetadataBugSnapshotNoRemovals",
    "KRaftMetadataBugReaderReReads",
    "KRaftMetadataBugLoadUncommitted",
    "KRaftMetadataLive",
    "KRaftMetadataLiteralAbort",
]


class Txn(IntEnum):
    """``MetadataBatchLoader.TransactionState``."""

    NO = 0
    STARTED = 1
    CONTINUED = 2
    ENDED = 3
    ABORTED = 4


DATA, BEGIN, END, ABORT = RecKind.DATA, RecKind.BEGIN, RecKind.END, RecKind.ABORT


class KRaftMetadata(Spec):
    """The metadata log, its controller, and per broker a loader, a cache and a reader."""

    check_deadlock = False
    symmetry = ("Brokers",)

    N = Const(1, min=1, doc="number of brokers (loaders), ids 1..N")
    K = Const(2, min=1, doc="number of metadata keys (topics, brokers...), ids 1..K")
    V = Const(1, min=1, doc="values of a key: 0 (absent, deleted) .. V")
    MaxLog = Const(5, min=2, doc="log capacity, the bootstrap record included")
    MaxFailovers = Const(1, min=0, doc="controller failovers in a run")
    MaxCrashes = Const(0, min=0, doc="broker crashes (loader restarts) in a run")
    GateCurrentHwm = Const(True, doc="the catch-up gate compares with the current "
                                     "high-water mark (4.4); False: with the one the "
                                     "loader first learned (KIP-631)")
    FlushAtAbort = Const(True, doc="the loader flushes after an ABORT record before it "
                                   "loads the next; False: the transition table alone")

    Brokers = Ids(1, N)
    Keys = Ids(1, K)

    # -- the metadata log and its controller ---------------------------------------------
    log = Seq(Record(kind=Enum(RecKind), key=Ref(Keys), val=Int(0, V)), MaxLog)
    hwm = Int(0, MaxLog)  # committed records: log[1..hwm]
    ctlTxn = Bool()  # the active controller has a transaction open
    mustAbort = Bool()  # the log ends in a transaction a former controller left open
    failovers = Int(0, MaxFailovers)
    # -- per broker: the loader (MetadataLoader + MetadataBatchLoader) -----------------
    up = Array(Brokers, Bool())
    known = Array(Brokers, Bool())  # the high-water mark is known
    target = Array(Brokers, Int(0, MaxLog))  # the learned one (GateCurrentHwm=False)
    applied = Array(Brokers, Int(0, MaxLog))  # last loaded offset (lastOffset)
    txn = Array(Brokers, Enum(Txn))
    delta = Array(Brokers, Array(Keys, Int(0, V + 1)))  # 0 untouched, else value + 1
    img = Array(Brokers, Array(Keys, Int(0, V)))  # the loader's image
    imgOff = Array(Brokers, Int(0, MaxLog))  # its provenance offset
    catching = Array(Brokers, Bool(init=True))  # catchingUp
    fault = Array(Brokers, Bool())
    # -- per broker: the cache (KRaftMetadataCache) and a request thread ----------------
    cache = Array(Brokers, Array(Keys, Int(0, V)))
    cacheOff = Array(Brokers, Int(0, MaxLog))  # 0: nothing published yet
    rd = Array(Brokers, Array(Keys, Int(0, V)))  # the image a reader works on
    startHwm = Array(Brokers, Int(0, MaxLog))  # history: the high-water mark at start
    crashes = Int(0, MaxCrashes)

    def init_states(self) -> Any:
        """The log holds the bootstrap record (metadata.version, a data record of no
        modelled key), committed; no broker runs yet."""
        yield {"log": [{"kind": DATA, "key": 0, "val": 0}], "hwm": 1}

    # -- helpers (bug variants override these) ---------------------------------------
    def load_limit(self, s: Any) -> Any:
        """The loader reads committed records only (``handleCommit``)."""
        return s.hwm

    def still_catching_up(self, s: Any, b: int, off: Any) -> Any:
        """``stillNeedToCatchUp``: the high-water mark is unknown, the image is behind
        it ("offset < highWaterMark - 1" with 0-based offsets is ``off < hwm`` here), or
        no record was seen (the bootstrap record is offset 1)."""
        h = s.hwm if self.GateCurrentHwm else s.target[b]
        return not_(s.known[b]) | (off < h) | (off < 1)

    def flushes_inside_txn(self) -> bool:
        """``maybeFlushBatches`` publishes nothing in STARTED/CONTINUED."""
        return False

    def abort_drops_delta(self) -> bool:
        """ABORTED publishes an empty delta on the unchanged image."""
        return True

    def flush_on_begin(self) -> bool:
        """A BEGIN after accumulated records first emits them (4.4, not batch-aligned)."""
        return True

    def abort_on_failover(self) -> bool:
        """A new controller aborts a transaction its predecessor left open (KIP-866)."""
        return True

    def snapshot_removes(self) -> bool:
        """``finishSnapshot()`` removes what the snapshot does not hold."""
        return True

    # -- derived -------------------------------------------------------------------------
    def _in_txn(self, s: Any, b: int) -> Any:
        return (s.txn[b] == Txn.STARTED) | (s.txn[b] == Txn.CONTINUED)

    def _applied_delta(self, s: Any, b: int) -> dict[int, Any]:
        return {k: where(s.delta[b][k] > 0, s.delta[b][k] - 1, s.img[b][k]) for k in self.Keys}

    def _emit(self, s: Any, t: Any, b: int, when: Any, image: dict[int, Any], off: Any) -> None:
        """``applyDeltaAndUpdate`` then ``maybePublishMetadata``, when ``when`` holds: the
        loader's image always advances; the cache only once the gate has opened."""
        catching = s.catching[b] & self.still_catching_up(s, b, off)
        pub = when & not_(catching)
        t.catching[b] = where(when, catching, s.catching[b])
        t.imgOff[b] = where(when, off, s.imgOff[b])
        t.cacheOff[b] = where(pub, off, s.cacheOff[b])
        for k in self.Keys:
            t.img[b][k] = where(when, image[k], s.img[b][k])
            t.cache[b][k] = where(pub, image[k], s.cache[b][k])

    def _reset(self, t: Any, b: int) -> None:
        t.known[b] = False
        t.target[b] = 0
        t.applied[b] = 0
        t.txn[b] = Txn.NO
        t.imgOff[b] = 0
        t.catching[b] = True
        t.fault[b] = False
        t.cacheOff[b] = 0
        t.startHwm[b] = 0
        for k in self.Keys:
            t.delta[b][k] = 0
            t.img[b][k] = 0
            t.cache[b][k] = 0
            t.rd[b][k] = 0

    # -- the controller and Raft --------------------------------------------------------
    def _room(self, s: Any, keep_free: Any) -> Any:
        return s.log.len() + keep_free < self.MaxLog

    @action(k=Keys, v=lambda self: range(self.V + 1))
    def Write(self, s, t, k, v):
        """The active controller appends a data record (``v`` = 0: a deletion), inside
        or outside its transaction (leaving room for the END)."""
        t.log = s.log.append({"kind": DATA, "key": k, "val": v})
        return not_(s.mustAbort) & self._room(s, where(s.ctlTxn, 1, 0))

    @action
    def Begin(self, s, t):
        """The controller starts a metadata transaction (BeginTransactionRecord)."""
        t.log = s.log.append({"kind": BEGIN, "key": 0, "val": 0})
        t.ctlTxn = True
        return not_(s.ctlTxn) & not_(s.mustAbort) & self._room(s, 1)

    @action
    def End(self, s, t):
        """The controller ends its transaction (EndTransactionRecord)."""
        t.log = s.log.append({"kind": END, "key": 0, "val": 0})
        t.ctlTxn = False
        return s.ctlTxn & self._room(s, 0)

    @action
    def Commit(self, s, t):
        """Raft commits the next record: the high-water mark advances."""
        t.hwm = s.hwm + 1
        return s.hwm < s.log.len()

    @action(keep=lambda self: range(self.MaxLog + 1))
    def Failover(self, s, t, keep):
        """A new controller takes over with ``log[1..keep]``: it holds every committed
        record and may lose the uncommitted tail. A transaction open at ``keep`` is
        left dangling: the new controller must abort it first."""
        t.log = s.log.prefix(keep)
        t.ctlTxn = False
        opens = fold_log(s.log, self.Keys).open
        dangling = opens[keep] if keep < len(opens) else False
        t.mustAbort = dangling if self.abort_on_failover() else False
        t.failovers = s.failovers + 1
        return ((s.failovers < self.MaxFailovers) & (s.hwm <= keep)
                & (keep <= s.log.len()))

    @action
    def AbortDangling(self, s, t):
        """The new controller appends AbortTransactionRecord for the dangling one."""
        t.log = s.log.append({"kind": ABORT, "key": 0, "val": 0})
        t.mustAbort = False
        return s.mustAbort & self._room(s, 0)

    # -- the broker: loader, cache, reader -------------------------------------------------
    @action(b=Brokers)
    def Start(self, s, t, b):
        """The broker starts: an empty image, catching up, the high-water mark unknown."""
        t.up[b] = True
        t.startHwm[b] = s.hwm
        return not_(s.up[b])

    @action(b=Brokers)
    def Crash(self, s, t, b):
        """The broker stops; its loader, cache and readers are gone."""
        t.up[b] = False
        self._reset(t, b)
        t.crashes = s.crashes + 1
        return s.up[b] & (s.crashes < self.MaxCrashes)

    @action(b=Brokers)
    def LearnHwm(self, s, t, b):
        """The Raft client learns the high-water mark from the leader."""
        t.known[b] = True
        if not self.GateCurrentHwm:
            t.target[b] = s.hwm
        return s.up[b] & not_(s.known[b])

    @action(b=Brokers)
    def Load(self, s, t, b):
        """``loadBatch``: the loader replays the next committed record through the
        transaction table (a fault on a marker it rejects). A BEGIN after accumulated
        records first emits them (``applyDeltaAndUpdate``, not batch-aligned)."""
        e = s.log.at(s.applied[b] + 1)
        in_txn = self._in_txn(s, b)
        t.applied[b] = s.applied[b] + 1
        with t.branch("data", e.kind == DATA):
            tx = s.txn[b]
            t.txn[b] = where(tx == Txn.STARTED, Txn.CONTINUED,
                             where((tx == Txn.ENDED) | (tx == Txn.ABORTED), Txn.NO, tx))
            for k in self.Keys:
                t.delta[b][k] = where(e.key == k, e.val + 1, s.delta[b][k])
        with t.branch("begin", e.kind == BEGIN):
            t.fault[b] = in_txn
            t.txn[b] = where(in_txn, s.txn[b], Txn.STARTED)
            flush = not_(in_txn) & (s.applied[b] > s.imgOff[b])
            if self.flush_on_begin():
                self._emit(s, t, b, flush, self._applied_delta(s, b), s.applied[b])
                for k in self.Keys:
                    t.delta[b][k] = where(flush, 0, s.delta[b][k])
        with t.branch("end", e.kind == END):
            t.fault[b] = not_(in_txn)
            t.txn[b] = where(in_txn, Txn.ENDED, s.txn[b])
        with t.branch("abort", e.kind == ABORT):
            t.fault[b] = not_(in_txn)
            t.txn[b] = where(in_txn, Txn.ABORTED, s.txn[b])
        ok = s.up[b] & s.known[b] & not_(s.fault[b]) & (s.applied[b] < self.load_limit(s))
        if self.FlushAtAbort:
            ok = ok & (s.txn[b] != Txn.ABORTED)
        return ok

    @action(b=Brokers)
    def Flush(self, s, t, b):
        """``maybeFlushBatches`` at the end of a ``handleCommit``: outside a transaction
        the accumulated delta is applied (ABORTED: an empty delta on the unchanged
        image), then published if the catch-up gate is open (``resetToImage``)."""
        aborted = s.txn[b] == Txn.ABORTED
        image = self._applied_delta(s, b)
        if self.abort_drops_delta():
            image = {k: where(aborted, s.img[b][k], v) for k, v in image.items()}
        self._emit(s, t, b, True, image, s.applied[b])
        t.txn[b] = Txn.NO
        for k in self.Keys:
            t.delta[b][k] = 0
        ok = s.up[b] & not_(s.fault[b]) & (s.applied[b] > s.imgOff[b])
        if not self.flushes_inside_txn():
            ok = ok & not_(self._in_txn(s, b))
        return ok

    @action(b=Brokers, i=lambda self: range(1, self.MaxLog + 1))
    def LoadSnapshot(self, s, t, b, i):
        """``handleLoadSnapshot``: the loader, behind, gets the snapshot at committed
        offset ``i`` (taken outside any transaction): the current image plus the
        snapshot's records, then ``finishSnapshot()`` removes what it does not hold."""
        f = fold_log(s.log, self.Keys)
        snap = f.images[i]
        if self.snapshot_removes():
            image = dict(snap)
        else:
            image = {k: where(snap[k] != 0, snap[k], s.img[b][k]) for k in self.Keys}
        t.applied[b] = i
        t.txn[b] = Txn.NO
        for k in self.Keys:
            t.delta[b][k] = 0
        self._emit(s, t, b, True, image, i)
        return (s.up[b] & s.known[b] & not_(s.fault[b]) & (s.applied[b] < i)
                & (i <= s.hwm) & not_(f.open[i]))

    @action(b=Brokers)
    def Grab(self, s, t, b):
        """A request thread reads ``currentImage`` once and works on that image."""
        for k in self.Keys:
            t.rd[b][k] = s.cache[b][k]
        return s.up[b]

    # -- properties ----------------------------------------------------------------------
    AbortedNeverVisible = aborted_never_visible()
    PublishedIsCommittedPrefix = published_is_committed_prefix()
    CatchUpBeforePublish = catch_up_before_publish()
    ImageMonotonic = image_monotonic()
    Agreement = agreement()
    LoaderNeverFaults = loader_never_faults()
    ReaderSeesOneImage = reader_sees_one_image()


class KRaftMetadataBugNoCatchUpGate(KRaftMetadata):
    """Bug: the loader publishes as soon as it has seen a record, before it "has reached
    the cluster high-water mark"."""

    def still_catching_up(self, s: Any, b: int, off: Any) -> Any:
        return off < 1


class KRaftMetadataBugPublishInsideTxn(KRaftMetadata):
    """Bug: ``maybeFlushBatches`` publishes the accumulated delta inside a transaction."""

    def flushes_inside_txn(self) -> bool:
        return True


class KRaftMetadataBugAbortPublishesDelta(KRaftMetadata):
    """Bug: an aborted transaction publishes its delta instead of "discarding partial
    work"."""

    def abort_drops_delta(self) -> bool:
        return False


class KRaftMetadataBugNoFlushOnBegin(KRaftMetadata):
    """Bug: a BEGIN after accumulated records does not emit them first (the
    not-batch-aligned flush is missing): they join the transaction and an ABORT drops
    them."""

    def flush_on_begin(self) -> bool:
        return False


class KRaftMetadataBugNoAbortOnFailover(KRaftMetadata):
    """Bug: a new controller does not abort the transaction its predecessor left open
    and starts its own: the loader meets a BEGIN inside a transaction."""

    def abort_on_failover(self) -> bool:
        return False


class KRaftMetadataBugSnapshotNoRemovals(KRaftMetadata):
    """Bug: loading a snapshot skips ``finishSnapshot()``: a key the snapshot no longer
    holds (a deleted topic) stays in the image."""

    def snapshot_removes(self) -> bool:
        return False


class KRaftMetadataBugReaderReReads(KRaftMetadata):
    """Bug: a request thread re-reads ``currentImage`` for each key it needs
    ("re-reading the field risks mixing two image versions")."""

    @action(b=KRaftMetadata.Brokers)
    def Grab(self, s, t, b):
        """(Replaced by ``ReadKey``.)"""
        return False

    @action(b=KRaftMetadata.Brokers, k=KRaftMetadata.Keys)
    def ReadKey(self, s, t, b, k):
        """The request thread reads key ``k`` from the current image."""
        t.rd[b][k] = s.cache[b][k]
        return s.up[b]


class KRaftMetadataBugLoadUncommitted(KRaftMetadata):
    """Bug: the loader replays records the leader has appended but Raft has not
    committed (a failover may still truncate them)."""

    def load_limit(self, s: Any) -> Any:
        return s.log.len()


class KRaftMetadataLive(KRaftMetadata):
    """Liveness: the loader publishes, becomes current, and a dangling transaction is
    aborted, under weak fairness of Raft's commits, the controller closing its
    transaction or aborting a dangling one, and every loader step (the same model,
    without symmetry reduction, which liveness checking refuses)."""

    symmetry = ()
    fairness = {"Commit": "weak", "End": "weak", "AbortDangling": "weak", "Start": "weak",
                "LearnHwm": "weak", "Load": "weak", "Flush": "weak"}

    @leads_to
    def EventuallyPublishes(self, s):
        """A running loader that has not faulted publishes (or stops running)."""
        return (s.up[1] & not_(s.fault[1]), (s.cacheOff[1] > 0) | not_(s.up[1]))

    @eventually_always
    def EventuallyCurrent(self, s):
        """From some point on, every cache holds the last committed offset."""
        return all_of(self.Brokers, lambda b: s.up[b] & (s.cacheOff[b] == s.hwm))

    @leads_to
    def DanglingTxnEventuallyAborted(self, s):
        """A transaction a former controller left open is eventually aborted."""
        return s.mustAbort, not_(s.mustAbort)


class KRaftMetadataLiteralAbort(KRaftMetadata):
    """The transition table alone (``FlushAtAbort=False``): a data record loaded after
    an ABORT, before the flush, resets the table to NO_TRANSACTION and the flush
    publishes the aborted records with it."""

    FlushAtAbort = Const(False, doc="the loader flushes after an ABORT record before it "
                                    "loads the next; False: the transition table alone")
