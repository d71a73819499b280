"""Does not import."""

from modelcheck import Spec

class Broken(Spec)
    pass
