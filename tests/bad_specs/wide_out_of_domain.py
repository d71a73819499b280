"""An assignment outside the declared domain in a wide state (a long queue of records,
most of its slots empty): the error shows the state by variable, not cell by cell."""

from modelcheck import Int, Record, Seq, Spec, action

Msg = Record(src=Int(0, 3), epoch=Int(0, 7), offset=Int(0, 7))


class WideOutOfDomain(Spec):
    queue = Seq(Msg, 40)
    epoch = Int(0, 3)

    @action
    def Bump(self, s, t):
        t.epoch = s.epoch + 1
        t.queue = s.queue.append({"src": 1, "epoch": 2, "offset": 3})
        return s.queue.len() < 40
