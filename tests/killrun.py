"""Kill a checking process (SIGKILL) once its checkpoint holds a given level."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from modelcheck.checkpoint import MANIFEST


def kill_at_level(cmd: Sequence[str], ckpt: Path, level: int, *, cwd: Path,
                  env: dict[str, str], timeout: float = 120) -> None:
    """Run ``cmd``; SIGKILL it as soon as the manifest in ``ckpt`` has committed
    ``level`` (it must not end by itself first)."""
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        at = -1
        while at < level:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, f"no checkpoint of level {level} in {timeout} s"
            try:
                at = json.loads((ckpt / MANIFEST).read_text())["state"]["depth"]
            except (OSError, ValueError):
                pass  # not written yet (the manifest is replaced atomically)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
