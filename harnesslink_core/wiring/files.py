"""Changing other programs' files safely: plan first, then write atomically.

Every change is planned as a `FileChange` (the bytes before and after), so
`--dry-run` can show a diff of exactly what a real run would write. Applying a
change takes a one-time backup of the original first (never overwritten by a
later install), writes through symlinks to their target (dotfile managers keep
their links), keeps the file's mode, and replaces the file in one `os.replace`.
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import Refused

BACKUP_SUFFIX = ".harnesslink-backup"


@dataclass(frozen=True)
class FileChange:
    path: Path
    before: bytes | None  # None: the file does not exist
    after: bytes | None  # None: delete the file
    drop_backup: bool = False  # the file is back to its backup, which is no longer needed
    backup: bool = True  # False for files that are wholly ours: nothing of the user's to keep

    def diff(self) -> str:
        """What `--dry-run` shows: a one-line summary for a file made or removed whole, else a unified diff."""
        if self.before is None and self.after is not None:
            return f"new file {self.path}: {len(_lines(self.after))} lines, {len(self.after):,} bytes\n"
        if self.after is None and self.before is not None:
            return f"file removed {self.path} ({len(_lines(self.before))} lines)\n"
        old = _lines(self.before)
        new = _lines(self.after)
        label = str(self.path)
        return "".join(
            difflib.unified_diff(
                old,
                new,
                fromfile=label if self.before is not None else "/dev/null",
                tofile=label if self.after is not None else "/dev/null",
            )
        )


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def backup_path(path: Path) -> Path:
    """Where the original of `path` (of its target, for a symlink) is kept."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + BACKUP_SUFFIX)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise Refused(f"{path} is a folder", f"hint: move {path} away, then run again") from None
    except PermissionError:
        raise Refused(f"cannot read {path}", f"hint: check the permissions of {path}") from None


def check_writable(path: Path) -> None:
    """Refuse a file its owner made read-only: that is a deliberate choice (managed dotfiles)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not mode & stat.S_IWUSR:
        raise Refused(
            f"{path} is read-only",
            f"hint: make it writable (chmod u+w '{path}') or add the hooks yourself, then run again",
        )


def apply(change: FileChange) -> None:
    target = Path(os.path.realpath(change.path))
    if change.after is None:
        target.unlink(missing_ok=True)
    else:
        if change.before is not None and change.backup:
            backup_once(target, change.before)
        atomic_write(target, change.after)
    if change.drop_backup:
        backup_path(target).unlink(missing_ok=True)


def backup_once(path: Path, original: bytes) -> None:
    """Keep the file as it was before our first change; a later install never replaces it."""
    backup = backup_path(path)
    if backup.exists():
        return
    atomic_write(backup, original, mode=_mode_of(path))


def _mode_of(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = _mode_of(path)
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
