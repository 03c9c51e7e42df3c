"""A publish folder `tiles --out` writes into, which others may write to as well (a shared web
root): a file is created only under a fresh name of its own (O_CREAT | O_EXCL, no link
followed) and renamed into place, every folder below DIR is opened relative to its parent with
O_NOFOLLOW, and a file already there with the same bytes is left alone. A symbolic link met on
the way (DIR itself aside: the user named it) is refused, naming it: nothing is written
through it, whatever it points at."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path, PurePosixPath
from types import TracebackType

from store.errors import StoreError

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class LinkRefused(StoreError):
    """A symbolic link (or another non-regular file) where a tile or folder goes."""


class TileFolder:
    """DIR, opened once; `put(relative, data)` writes a file below it, or leaves it as it is.
    Counts what it wrote (`written`) and left (`unchanged`)."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self._fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.written = 0
        self.unchanged = 0

    def __enter__(self) -> TileFolder:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        os.close(self._fd)

    def put(self, relative: str, data: bytes) -> bool:
        """Write `data` at DIR/`relative` unless the same bytes are there; True if written."""
        *folders, name = PurePosixPath(relative).parts
        parent = self._fd
        opened: list[int] = []
        try:
            for depth, folder in enumerate(folders):
                parent = self._folder(parent, folder, "/".join(folders[:depth + 1]))
                opened.append(parent)
            if self._holds(parent, name, relative, data):
                self.unchanged += 1
                return False
            self._replace(parent, name, data)
        finally:
            for fd in opened:
                os.close(fd)
        self.written += 1
        return True

    def _where(self, relative: str) -> str:
        return str(self.root / relative)

    def _folder(self, parent: int, name: str, relative: str) -> int:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent)
        try:
            return os.open(name, _DIRECTORY, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise LinkRefused(f"{self._where(relative)}: not a folder core-audit made (a "
                                  "symbolic link or a file): refusing to write through it; "
                                  "remove it and run `tiles` again") from None
            raise

    def _holds(self, parent: int, name: str, relative: str, data: bytes) -> bool:
        """Whether DIR/relative is a regular file of exactly `data` (LinkRefused: a link)."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=parent)
        except FileNotFoundError:
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(f"{self._where(relative)}: a symbolic link core-audit did "
                                  "not make: refusing to replace or follow it; remove it and "
                                  "run `tiles` again") from None
            raise
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO, a device: opened, not read
                raise LinkRefused(f"{self._where(relative)}: not a regular file: refusing to "
                                  "replace it")
            return stream.read(len(data) + 1) == data

    def _replace(self, parent: int, name: str, data: bytes) -> None:
        """`data` in a file of a fresh name (O_EXCL: a planted file or link there fails the
        create, another name is drawn), flushed to disk, then renamed over `name`."""
        for _ in range(16):
            temporary = f".{name}.{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(temporary, _NEW_FILE, 0o644, dir_fd=parent)
            except FileExistsError:
                continue
            break
        else:  # pragma: no cover - 16 collisions of 64 random bits
            raise StoreError(f"{self.root}: no fresh temporary name for {name}")
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.rename(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=parent)
            raise

