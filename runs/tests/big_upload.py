"""A valid bundle of any size, written to disk without being held in memory: one real-looking run and a raw
sample file (``sb.vm``, kept in the archive, never read by the import) of random bytes to make up the size."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from runs.tests import hostile


class _RandomBytes:
    """A file of ``size`` random bytes that exists only while tarfile reads it."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return os.urandom(n)


def write(path: Path, size: int, *, seed: str = "") -> Path:
    """An uncompressed tar of about ``size`` bytes at ``path``; ``seed`` makes other bytes of the same size."""
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in hostile.good_run({"notes.txt": f"big upload {seed}\n".encode()}):
            tar.addfile(info, None if data is None else io.BytesIO(data))
        info = tarfile.TarInfo(f"{hostile.RUN}/sb.vm.point-query.range100.pk1.dop1")
        info.size = max(0, size - 16 * 1024)
        info.mtime = 1_700_000_000
        tar.addfile(info, _RandomBytes(info.size))  # type: ignore[arg-type]
    return path
