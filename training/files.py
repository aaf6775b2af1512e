"""A run's writes: atomic where a file is replaced whole, and one clear error for any failure.

Every file a run replaces (checkpoint, saved policies, config, summary, evaluation report) is
written to a temporary file beside it, fsynced, then moved over the old one with ``os.replace``
and the directory fsynced: a crash or a full disk at any moment leaves the old file or the new
one, never a torn file. Whatever write fails (those, the CSV rows, TensorBoard's event files,
the plots) becomes a :class:`RunWriteError` naming the path and the cause in words, which the
trainer reports with the last good checkpoint and a command to continue from it.

Objects that serialise themselves (``torch.save``, SB3's ``save``) are serialised into memory
first and written here with plain file I/O: written straight to a file, a full disk comes back
from torch's C++ stream as "basic_ios::clear: iostream error", with no path and no cause.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

#: What each common cause of a failed write means for the user.
CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.EROFS: "the filesystem is read-only",
    errno.ENOENT: "the directory is gone (deleted or moved while the run was writing)",
    errno.ENOTDIR: "a parent of the path is not a directory",
    errno.EIO: "the device reported an I/O error",
}


class RunWriteError(RuntimeError):
    """A file of a run could not be written; ``path`` and ``errno`` say which and why."""

    def __init__(self, path: str | os.PathLike[str], cause: BaseException) -> None:
        self.path = os.fspath(path)
        self.errno = getattr(cause, "errno", None)
        code = errno.errorcode.get(self.errno, "") if self.errno is not None else ""
        meaning = CAUSES.get(self.errno, "") if self.errno is not None else ""
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        detail = ", ".join(part for part in (code, meaning) if part)
        super().__init__(f"could not write {self.path}: {reason}"
                         + (f" ({detail})" if detail else ""))


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn an ``OSError`` raised while writing ``path`` into a :class:`RunWriteError`."""
    try:
        yield
    except OSError as err:
        raise RunWriteError(path, err) from err


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object]) -> None:
    """Call ``write(tmp_path)``, then atomically move the result to ``path``.

    A crash at any moment leaves either the old file or the new one, never a torn file; a
    failure (``OSError``) raises :class:`RunWriteError` naming ``path`` and leaves the old file
    and no temporary one. ``write`` should use Python's file I/O (see the module's note)."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}{path.suffix}")
    with writing(path):
        try:
            write(tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                pass  # the directory is gone or read-only: the first error is the one to report
        # Make the rename itself durable.
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """:func:`atomic_write` of ``data``."""
    atomic_write(path, lambda tmp: tmp.write_bytes(data))


def serialised(save: Callable[[io.BytesIO], object]) -> bytes:
    """What ``save(buffer)`` writes into an in-memory buffer."""
    buffer = io.BytesIO()
    save(buffer)
    return buffer.getvalue()
