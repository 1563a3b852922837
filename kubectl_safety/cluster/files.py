"""Reading files that someone else named: regular files only, with a size limit.

``/dev/zero``, a FIFO nobody writes to, a terminal or a directory given as a dump, manifest,
token or CA file would otherwise hang or fill memory. Opened without blocking (a FIFO's open
would wait for a writer), checked with ``fstat``, then read up to the limit.
"""

import os
import stat

_BLOCK = 1 << 20


def read_limited(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``; OSError (with ``strerror``) otherwise or when larger than ``limit``.

    The first read is as large as the file (``fstat``), never as the limit; a file that grows
    while it is read is read on block by block, up to the limit.
    """
    with open_limited(path, limit) as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(size + 1)
        if len(data) <= size:
            return data
        parts, total = [data], len(data)
        while parts[-1] and total <= limit:
            parts.append(f.read(_BLOCK))
            total += len(parts[-1])
    if total > limit:
        raise OSError(0, f"larger than {limit} bytes")
    return b"".join(parts)


def open_limited(path: str, limit: int):
    """The regular file ``path`` of at most ``limit`` bytes (by fstat), open for reading in binary."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except ValueError:  # a NUL byte in the name
        raise OSError(0, "not a valid file name") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > limit:
            raise OSError(0, f"larger than {limit} bytes")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(os.dup(fd), "rb")
    finally:
        os.close(fd)


def read_stream(stream, limit: int, binary_check=True) -> bytes:
    """Up to ``limit`` bytes of ``stream`` (stdin); binary data (a NUL byte) stops it at once."""
    parts, total = [], 0
    while True:
        chunk = stream.read(_BLOCK)
        if not chunk:
            return b"".join(parts)
        if binary_check and b"\x00" in chunk:
            raise OSError(0, "not a text file (binary data)")
        total += len(chunk)
        if total > limit:
            raise OSError(0, f"larger than {limit} bytes")
        parts.append(chunk)
