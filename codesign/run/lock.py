"""The driver lock: one driver per run database, for as long as the driver lives.

A driver is named HOST:PID (:func:`this_driver`), as run databases record it in
``runs.driver`` and the lock file holds it; :func:`driver_alive` judges a recorded one.
:class:`DriverLock` is ``flock`` on ``run.sqlite.lock`` beside the database
(:func:`lock_path`), taken by ``codesign optimize`` / ``resume`` and ``migrate`` before
they write (:mod:`codesign.run.driver`, :mod:`codesign.run.migrate`).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from codesign.errors import UserError


def this_driver() -> str:
    """HOST:PID of this process, as run databases and driver locks record a driver."""
    return f"{socket.gethostname()}:{os.getpid()}"


def driver_alive(driver: str | None, other_host: bool = True) -> bool:
    """Whether the driver process recorded as host:pid still runs (another host: cannot
    tell, ``other_host`` is returned)."""
    host, _, pid = (driver or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return other_host
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lock_path(database: Path) -> Path:
    """The driver lock of a run database: ``results/<name>/run.sqlite.lock``."""
    return database.with_name(database.name + ".lock")


class DriverLock:
    """One driver per run database, for as long as the driver lives.

    The lock is ``flock`` on ``run.sqlite.lock`` beside the database, which holds the
    HOST:PID of its driver. The kernel releases an flock when its process dies however it
    dies (SIGKILL, a crash), so a lock left by a dead driver is stale by construction: the
    next driver takes it and writes its own HOST:PID. A live holder's HOST:PID is what the
    refusal names. On a file system without flock the HOST:PID in the file decides, as
    :func:`driver_alive` judges it (another host: assumed alive; delete the file when
    that driver is known to be gone). Released (the file removed) on :meth:`release`.
    """

    def __init__(self, database: str | Path):
        self.database = Path(database)
        self.path = lock_path(self.database)
        self._fd: int | None = None

    def _refuse(self, holder: str, note: str = "") -> UserError:
        host, _, pid = holder.rpartition(":")
        how = (f"wait for it or stop it (kill -INT {pid} on {host})" if holder else
               "wait for it")
        return UserError(f"{self.database.parent}: already being run by {holder or 'another driver'}"
                         f"{note}; expected one driver per run: {how}, then `codesign resume "
                         f"{self.database.parent}`")

    def acquire(self) -> "DriverLock":
        import fcntl

        me = this_driver()
        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise UserError(f"{self.path}: cannot create the driver lock ({exc.strerror}); "
                                f"expected a writable run folder") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise self._refuse(holder) from None
            except OSError:          # no flock here: the recorded HOST:PID decides
                holder = _read_holder(fd)
                if holder and holder != me and driver_alive(holder, other_host=True):
                    os.close(fd)
                    raise self._refuse(holder, f" (no file locks here; if it is gone, delete "
                                               f"{self.path})") from None
            try:                     # a releasing driver removes the file: lock the one at path
                same = os.path.samestat(os.stat(self.path), os.fstat(fd))
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, me.encode(), 0)
            self._fd = fd
            return self
        raise UserError(f"{self.path}: the driver lock keeps changing hands; expected one driver per run")

    def release(self) -> None:
        if self._fd is not None:
            try:
                self.path.unlink(missing_ok=True)    # while still holding it (see acquire)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> "DriverLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""
