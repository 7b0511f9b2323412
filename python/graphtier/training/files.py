"""Files a training job writes: each replaces the old one only once it is complete."""

from __future__ import annotations

import json
import os
from typing import Any, Callable


def write_atomically(path: str, write: Callable[[str], None]) -> None:
    """write(tmp) fills a temporary file beside `path`, which is then renamed over it: a crash
    leaves the old file (checkpoints, --json), and so does a write that fails, removing its temporary
    file."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path: str, value: Any) -> None:
    """`value` as indented JSON in `path`, atomically (--json's metrics)."""

    def write(tmp: str) -> None:
        with open(tmp, "w") as f:
            json.dump(value, f, indent=1)

    write_atomically(path, write)
