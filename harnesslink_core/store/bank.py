"""Bank entries: one Markdown file per finished turn (SPEC §3) or per learning an agent recorded
(`memory_bank`, SPEC §10), written atomically and exactly once."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from .. import clock
from ..model import Turn
from ..redact import redact, redact_value
from ..safefile import may_make_folder, read_regular
from .scope import project_slug

try:
    from _blake2 import blake2b  # what hashlib.blake2b is, without hashlib loading OpenSSL (~2 ms)
except ImportError:  # not CPython
    from hashlib import blake2b

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the stop hook's pass)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

PROMPT_CAP = 2_000
RESULT_CAP = 4_000
ACTION_LINE_CAP = 400
ACTIONS_MAX = 40
FILE_CAP = 1_000_000  # the uploader's MEMORY_UPLOAD_MAX_BYTES is 1 MB; stay under it
TITLE_CAP = 80
SLUG_CAP = 60
SECTIONS = ("## Prompt", "## Actions", "## Result")
LEARNING_ACTIONS = "(a learning recorded with memory_bank)"
LEARNING_ORIGIN = "mcp"  # a learning's turn_key prefix, and its harness in the ledger


def cap(text: str, limit: int) -> str:
    """At most `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"…[cut: {len(text) - limit} more characters]"


_SPACES = re.compile(r"\s+")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_PLAIN_TAG = re.compile(r"[a-z0-9_][a-z0-9_.-]*")
_HEADING = re.compile(r"(?m)^(## (?:Prompt|Actions|Result)\s*)$")


def make_title(prompt: str) -> str:
    """The prompt's first meaningful line, whitespace collapsed, short."""
    for line in prompt.splitlines():
        line = _SPACES.sub(" ", line).strip().lstrip("#>*- ").strip()
        if _has_word_character(line):
            return line if len(line) <= TITLE_CAP else line[: TITLE_CAP - 1].rstrip() + "…"
    return "Untitled turn"


def _has_word_character(line: str) -> bool:
    """What `re.search(r"[A-Za-z0-9\u00c0-\uffff]", line)` finds, without compiling that class (3 ms: it spans
    most of the BMP)."""
    return any("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or "\u00c0" <= c <= "\uffff" for c in line)


def title_slug(title: str) -> str:
    slug = _NOT_SLUG.sub("-", title.lower()).strip("-")[:SLUG_CAP].strip("-")
    return slug or "turn"


def yaml_quote(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar; escape the line separators YAML would fold.
    return orjson.dumps(value).decode().replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _tag(name: str) -> str:
    return name if _PLAIN_TAG.fullmatch(name) else yaml_quote(name)


def _guard_headings(text: str) -> str:
    """Keep a prompt or result from faking one of our section headings."""
    return _HEADING.sub(r" \1", text) if "## " in text else text


def action_lines(turn: Turn) -> list[str]:
    lines = []
    for action in turn.actions[:ACTIONS_MAX]:
        value = redact_value(action.input)  # the values, before JSON escapes a newline or a quote
        try:
            payload = orjson.dumps(value).decode()
        except TypeError:
            payload = orjson.dumps(redact(str(action.input))).decode()
        lines.append(cap(f"- {action.tool}: {payload}", ACTION_LINE_CAP))
    if len(turn.actions) > ACTIONS_MAX:
        lines.append(f"- …[cut: {len(turn.actions) - ACTIONS_MAX} more actions]")
    return lines


def tags(turn: Turn) -> list[str]:
    seen: dict[str, None] = {}
    for action in turn.actions:
        seen.setdefault(action.tool, None)
    return list(seen)


@dataclass
class Entry:
    name_stem: str  # `<file-safe ISO>--<title slug>`
    file_iso: str
    text: str
    turn_key: str
    # `text`'s frontmatter and sections exactly as `entries.split_frontmatter` / `entries.parse_entry` read
    # them back, so the MAIN.md index, the summaries and the search index need not parse what was just
    # written; None when the text holds anything that would make that reading differ (then it is parsed)
    meta: dict[str, object] | None = None
    sections: dict[str, str] | None = None


def frontmatter(*, file_iso: str, ts: str, title: str, tags: list[str], cwd: str, session_id: str,
                harness: str, turn_key: str, source: str) -> list[str]:
    """An entry's frontmatter lines (SPEC §3), in the contract's order; no `harness` line when it is ""."""
    return _frontmatter(file_iso=file_iso, ts=ts, title=title, tags=tags, cwd=redact(cwd), session_id=session_id,
                        harness=harness, turn_key=turn_key, source=source)


def _frontmatter(*, file_iso: str, ts: str, title: str, tags: list[str], cwd: str, session_id: str,
                 harness: str, turn_key: str, source: str) -> list[str]:
    return [
        "---",
        f"id: {file_iso}",
        f"ts: {yaml_quote(ts)}",
        f"title: {yaml_quote(title)}",
        "tags:" + ("" if tags else " []"),
        *[f"  - {t}" for t in tags],
        f"cwd: {yaml_quote(cwd)}",
        f"session_id: {yaml_quote(session_id)}",
        *([f"harness: {harness}"] if harness else []),
        f"turn_key: {yaml_quote(turn_key)}",
        f"source: {source}",
        "---",
    ]


def render(turn: Turn) -> Entry:
    prompt = redact(turn.prompt.strip())
    return _compose(
        at=turn.ended, title=make_title(redact(turn.title) if turn.title else prompt),
        tags=[_tag(t) for t in tags(turn)], cwd=turn.cwd, session_id=turn.session_id, harness=turn.harness,
        turn_key=turn.key, source=f"autobank:{turn.harness}",
        prompt=cap(prompt, PROMPT_CAP) or "(empty prompt)",
        actions="\n".join(action_lines(turn)) or "(no tool calls)",
        result=cap(redact(turn.result.strip()), RESULT_CAP) or "(no answer)",
    )


def learning_key(project: str, text: str) -> str:
    """A learning's turn_key, `mcp:<project digest>:<text digest>`: the same words in one project, one key."""
    return f"{LEARNING_ORIGIN}:{_digest(project)}:{_digest(' '.join(text.split()))}"


def render_learning(text: str, *, title: str, tags: list[str], at: float, cwd: str, session_id: str,
                    harness: str, source: str) -> Entry:
    """A learning an agent recorded (`memory_bank`, SPEC §10) as an entry of the SPEC §3 shape.

    Its title stands as the Prompt and its text as the Result; its turn_key is `learning_key`,
    so the same words recorded twice in a project are one entry.
    """
    text = redact(text.strip())
    title = make_title(redact(title) or text)
    return _compose(
        at=at, title=title, tags=[_tag(t) for t in tags], cwd=cwd, session_id=session_id, harness=harness,
        turn_key=learning_key(project_slug(cwd), text), source=source,
        prompt=title, actions=LEARNING_ACTIONS, result=cap(text, RESULT_CAP),
    )


def _digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "replace"), digest_size=10).hexdigest()


def _compose(*, at: float, title: str, tags: list[str], cwd: str, session_id: str, harness: str, turn_key: str,
             source: str, prompt: str, actions: str, result: str) -> Entry:
    """The entry's text: frontmatter and the three sections; the Result is trimmed to keep the file under FILE_CAP."""
    ts = clock.iso(at)
    file_iso = clock.file_safe(ts)
    cwd = redact(cwd)
    front = _frontmatter(file_iso=file_iso, ts=ts, title=title, tags=tags, cwd=cwd, session_id=session_id,
                         harness=harness, turn_key=turn_key, source=source)
    prompt = _guard_headings(prompt)
    head = [
        *front,
        "",
        "## Prompt",
        "",
        prompt,
        "",
        "## Actions",
        "",
        actions,
        "",
        "## Result",
        "",
    ]
    before_result = "\n".join(head) + "\n"
    result = _guard_headings(result)
    room = FILE_CAP - len(before_result.encode()) - 200
    if len((result + "\n").encode()) > room:
        # bytes, not characters, decide the uploader's cap: trim until it fits
        keep = len(result)
        while keep > 0 and len(result[:keep].encode()) > room:
            keep = keep * 3 // 4
        result = result[:keep] + f"…[cut: {len(result) - keep} more characters]"
    text = before_result + result + "\n"
    entry = Entry(name_stem=f"{file_iso}--{title_slug(title)}", file_iso=file_iso, text=text, turn_key=turn_key)
    if _reads_back(text, front, (file_iso, source, *([harness] if harness else [])), (prompt, actions, result)):
        meta: dict[str, object] = {"id": file_iso, "ts": ts, "title": title,
                                   "tags": [orjson.loads(t) if t.startswith('"') else t for t in tags],
                                   "cwd": cwd, "session_id": session_id}
        if harness:
            meta["harness"] = harness
        meta["turn_key"] = turn_key
        meta["source"] = source
        entry.meta = meta
        entry.sections = {"prompt": prompt, "actions": actions, "result": result}
    return entry


READ_BACK_HEAD = 16_000  # frontmatter longer than this may not fit the head `projectfiles.read_header` reads


def _reads_back(text: str, front: list[str], bare: tuple[str, ...], sections: tuple[str, ...]) -> bool:
    """Whether `entries` reads this text back as the values it was made of: every line ends at a "\\n"
    (no other line break splits one), each unquoted frontmatter value is a plain scalar, and no section
    holds a line that could be a heading or has edges that reading strips."""
    if "\r" in text or len(text.splitlines()) != text.count("\n"):
        return False
    if sum(len(line) + 1 for line in front) > READ_BACK_HEAD:
        return False
    for value in bare:
        if not value or value != value.strip() or value[0] in "[{&*!|>%@`\"'" or " #" in value or "\n" in value:
            return False
    return all(s == s.strip() and not s.startswith("#") and "\n#" not in s for s in sections)


class Listing(set):
    """A bank folder's file names as a writer holding the pass lock keeps them (listed once, added to as it
    writes), also by the time their names start with: `find_entry` looks at one time's names, not all."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)
        self.by_time: dict[str, list[str]] = {}
        for name in self:
            self.by_time.setdefault(name.partition("--")[0], []).append(name)

    def add(self, name: str) -> None:
        if name not in self:
            self.by_time.setdefault(name.partition("--")[0], []).append(name)
        super().add(name)


def find_entry(bank_dir: Path, file_iso: str, turn_key: str, listing: set[str] | None = None) -> Path | None:
    """An entry already written for this turn (a pass killed after writing, before recording it).

    `listing` is the folder's file names if the caller already has them (a pass writing many: a `Listing`).
    """
    if listing is None:
        try:
            listing = set(os.listdir(bank_dir))
        except FileNotFoundError:
            return None
    if isinstance(listing, Listing) and "--" not in file_iso:
        named = listing.by_time.get(file_iso, [])  # a file_iso holds no "--": the names that start with it and "--"
    else:
        named = [n for n in listing if n.startswith(file_iso + "--")]
    return _holding(bank_dir, [n for n in named if n.endswith(".md")], turn_key)


def find_learning(bank_dir: Path, turn_key: str) -> Path | None:
    """The entry already holding this learning (`learning_key`), whenever it was recorded.

    A learning's time is not part of its key, so every entry's head is read; the bank, not the
    ledger, decides, because it also holds the learnings other machines recorded (pulled from the cloud).
    """
    try:
        names = sorted(n for n in os.listdir(bank_dir) if n.endswith(".md") and not n.startswith(".")
                       and not os.path.islink(bank_dir / n))
    except OSError:
        return None
    return _holding(bank_dir, names, turn_key)


def _holding(bank_dir: Path, names: list[str], turn_key: str) -> Path | None:
    """The first of these entries whose frontmatter carries this turn_key."""
    marker = f"turn_key: {yaml_quote(turn_key)}\n".encode()
    for name in names:
        head = read_regular(os.path.join(bank_dir, name), 8192)  # never a FIFO's or a link's
        if head is not None and marker in head:
            return bank_dir / name
    return None


def write(bank_dir: Path, entry: Entry, *, sync_folder: bool = True, listing: set[str] | None = None,
          staged: Path | None = None) -> Path:
    """Write the entry under a name no other entry has, atomically; return its path.

    The file appears whole or not at all: it is written to a temporary name
    (not ending in .md, so the uploader never sees it) and linked into place,
    which fails rather than replaces when the name is taken. A caller writing many entries
    may sync their folder once itself (`sync_folder=False`, then `fsync_dir`) and hand in the
    folder's names (`listing`, kept up to date here) instead of listing it for each entry, and
    may write and sync the temporary files of all of them first (`stage`, `sync_staged`), then
    hand each in (`staged`): their syncs then overlap instead of following one another. A caller that
    stages has looked for an entry of this turn (`find_entry`) before staging it, under the same lock.
    """
    try:
        existing = None if staged is not None else find_entry(bank_dir, entry.file_iso, entry.turn_key, listing)
        if existing:
            return existing
        if staged is None:
            refuse_linked_folders(bank_dir)
            made = make_folder(bank_dir)
            if made and sync_folder:
                sync_made(made)
            tmp = _temporary(bank_dir, entry.name_stem)
            _write_synced(tmp, entry.text.encode())
        else:
            tmp = staged
    except BaseException:
        if staged is not None:
            staged.unlink(missing_ok=True)
        raise
    try:
        for stem in _candidates(entry):
            target = bank_dir / f"{stem}.md"
            if _place(tmp, target):
                if listing is not None:
                    listing.add(target.name)
                if sync_folder and (error := fsync_dir(bank_dir)) is not None:
                    raise error  # placed, not yet sure to stay: the next pass finds it and counts it then
                return target
        raise FileExistsError(f"no free name for {entry.name_stem} in {bank_dir}")
    finally:
        tmp.unlink(missing_ok=True)


def _candidates(entry: Entry):
    """The names an entry may take, in order (made one at a time: nearly every entry takes the first)."""
    yield entry.name_stem
    suffix = blake2b(entry.turn_key.encode(), digest_size=3).hexdigest()
    yield f"{entry.name_stem}-{suffix}"
    for n in range(2, 100):
        yield f"{entry.name_stem}-{suffix}-{n}"


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def stage(bank_dir: Path, entry: Entry, made: list[Path] | None = None) -> Path:
    """An entry's bytes in a temporary file of its folder, not yet synced (see `write`'s `staged`).

    Three system calls for most (open, write, close): a pass stages hundreds, and the folder is made only
    when it is missing (the folders made then are added to `made`, for `fsync_dirs`)."""
    refuse_linked_folders(bank_dir)
    tmp = _temporary(bank_dir, entry.name_stem)
    try:
        fd = os.open(tmp, _NEW_FILE, 0o666)
    except FileNotFoundError:
        new = make_folder(bank_dir)
        if made is not None:
            made += new
        fd = os.open(tmp, _NEW_FILE, 0o666)
    try:
        data = memoryview(entry.text.encode())
        while data:  # a regular file takes it in one write; a short one (a full disk) raises next round
            data = data[os.write(fd, data):]
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return tmp


SYNC_THREADS = 16  # concurrent fsyncs share the file system's journal commits (creating files in threads
# too measured slower: each journal commit then waits for more of them)


def sync_staged(paths: list[Path], meanwhile: Callable[[], None] | None = None,
                writeback: Writeback | None = None) -> list[OSError | None]:
    """fsync each staged file, several at a time; for each, the error that kept it from the disk (and
    the file is removed then) or None. `meanwhile` is run in this thread while the disk works.

    With a `writeback` watch opened before they were staged, a batch of SYNCFS_FILES or more is synced by one
    syncfs instead; where that cannot vouch for all of them, each is fsync'd as above."""
    if writeback is not None and len(paths) >= SYNCFS_FILES:
        synced = writeback.sync({path.parent for path in paths}, meanwhile)
        meanwhile = None
        if synced:
            return [None] * len(paths)
    if len(paths) < 2:
        errors = [_sync(p) for p in paths]
        if meanwhile is not None:
            meanwhile()
        return errors
    # one job per thread, not per file: a job's hand-off costs the threads more than an fsync does
    lanes = min(SYNC_THREADS, len(paths))
    pending = _pool().start(_sync_each, [paths[lane::lanes] for lane in range(lanes)])
    if meanwhile is not None:
        meanwhile()
    done = _Pool.results(pending)
    return [done[k % lanes][k // lanes] for k in range(len(paths))]


def _sync_each(paths: list[Path]) -> list[OSError | None]:
    return [_sync(p) for p in paths]


def _sync(path: Path) -> OSError | None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return None
    except OSError as exc:
        path.unlink(missing_ok=True)
        return exc


SYNCFS_FILES = 2  # a batch of this many staged files or more may be synced by one syncfs (a hook's one entry is
# fsync'd: it would cost ctypes's import)
SYNCFS_DIRTY_MAX = 16 << 20  # ... unless this much else waits for writeback: syncfs would wait for all of it
# ... and only on these file systems, whose syncfs writes back and commits all (FUSE's may do neither, and
# others are not known to report writeback errors through it): elsewhere each file is fsync'd
SYNCFS_TYPES = frozenset({"ext4", "ext3", "xfs", "btrfs", "f2fs"})
# ... and only on kernels whose syncfs reports both the writeback errors since its descriptor was opened (5.8)
# and a failed journal commit or cache flush (5.17: "vfs: make sync_filesystem return errors from ->sync_fs")
SYNCFS_KERNEL = (5, 17)


class Writeback:
    """Writeback errors on a file system from now on, to sync a large batch with one `syncfs(2)`.

    One syncfs commits the journal once for all of a batch's files, where an fsync per file makes the disk
    flush its cache once per file (256 small files on ext4: 3 ms against 13 ms and more). Watched only where
    syncfs reports every error since its descriptor was opened (SYNCFS_KERNEL); opened before a batch is
    staged, it misses none of the batch's errors."""

    def __init__(self, fd: int, syncfs: Callable[[int], int]) -> None:
        self.fd = fd
        self.device = os.fstat(fd).st_dev
        self._syncfs = syncfs

    @classmethod
    def watch(cls, folder: Path, files: int) -> Writeback | None:
        """A watch on the file system `folder` is (or will be made) on, for a batch of `files`, or None where
        one syncfs is not the faster or not the sure way: one file, an older kernel, much else to write, a file
        system not in SYNCFS_TYPES."""
        if files < SYNCFS_FILES or (syncfs := _syncfs()) is None or _dirty_bytes() > SYNCFS_DIRTY_MAX:
            return None
        existing = next((f for f in (folder, *folder.parents) if f.is_dir()), folder)
        try:
            fd = os.open(existing, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            watch = cls(fd, syncfs)
        except OSError:
            os.close(fd)
            return None
        if _file_system(folder) not in SYNCFS_TYPES:
            watch.close()
            return None
        return watch

    def sync(self, folders: set[Path], meanwhile: Callable[[], None] | None = None) -> bool:
        """Whether everything written in `folders` is on the disk now: False when one is on another file
        system, or syncfs failed (which file it failed for, it cannot say). `meanwhile` is run here while
        the disk works."""
        import threading

        try:
            same = all(os.stat(folder).st_dev == self.device for folder in folders)
        except OSError:
            same = False
        done: list[int] = []
        if not same or meanwhile is None:
            if meanwhile is not None:
                meanwhile()
            return same and self._syncfs(self.fd) == 0
        # one thread, not the pool: starting its threads costs a batch more than its syncfs
        thread = threading.Thread(target=lambda: done.append(self._syncfs(self.fd)), name="harnesslink-syncfs",
                                  daemon=True)
        thread.start()
        try:
            meanwhile()
        finally:
            thread.join()  # never left holding the descriptor that `close` is about to close
        return done == [0]

    def close(self) -> None:
        os.close(self.fd)


_SYNCFS: list = []  # [syncfs or None], once looked up


def _syncfs() -> Callable[[int], int] | None:
    if not _SYNCFS:
        _SYNCFS.append(_load_syncfs())
    return _SYNCFS[0]


def _load_syncfs() -> Callable[[int], int] | None:
    import sys

    if sys.platform != "linux":
        return None
    try:
        if tuple(int(part) for part in os.uname().release.split(".")[:2]) < SYNCFS_KERNEL:
            return None
        import ctypes

        syncfs = ctypes.CDLL(None, use_errno=True).syncfs  # CDLL's calls let go of the interpreter lock
    except (ValueError, ImportError, OSError, AttributeError):
        return None
    syncfs.argtypes = [ctypes.c_int]
    syncfs.restype = ctypes.c_int
    return syncfs


_FILE_SYSTEMS: dict[str, str] = {}  # real path -> the type of the file system it is on


def _file_system(path: Path) -> str:
    """The type of the file system `path` is on ("" if unknown): that of the mount whose mount point is the
    longest that holds it, in /proc/self/mountinfo (not by device: a btrfs subvolume's files have a device
    number of their own)."""
    real = os.path.realpath(path)
    if real not in _FILE_SYSTEMS:
        _FILE_SYSTEMS[real] = _mounted_type(real)
    return _FILE_SYSTEMS[real]


def _mounted_type(real: str) -> str:
    best, kind = -1, ""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields, _, rest = line.partition(" - ")
                fields = fields.split()
                if len(fields) < 5 or not rest:
                    continue
                point = _unescape(fields[4])
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= best:  # the later of two mounts on one point is the one seen
                    best, kind = len(point), rest.split()[0]
    except OSError:
        return ""
    return kind


def _unescape(field: str) -> str:
    """A mountinfo path field: space, tab, newline and backslash are written as octal escapes."""
    if "\\" not in field:
        return field
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _dirty_bytes() -> int:
    """Bytes the kernel has yet to write back (all file systems'), or a figure past any limit if unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            fields = dict(line.split(b":", 1) for line in f.read().splitlines() if b":" in line)
        return sum(int(fields[name].split()[0]) for name in (b"Dirty", b"Writeback")) << 10
    except (OSError, KeyError, ValueError, IndexError):
        return 1 << 62


def fsync_dirs(folders: set[Path], writeback: Writeback | None = None, made: list[Path] = ()) -> dict[Path, OSError]:
    """Each folder's entries made durable, and each folder in `made` (made by this batch: `stage`) in its
    parent: by one syncfs with a `writeback` watch, else `fsync_dir` of each, several at a time. The folders
    whose sync failed, or one of whose new parents' did, with the error."""
    every = set(folders) | {folder.parent for folder in made}
    if not folders or writeback is not None and writeback.sync(every):
        return {}
    ordered = sorted(every)
    results = [fsync_dir(f) for f in ordered] if len(ordered) < 2 else _Pool.results(_pool().start(fsync_dir, ordered))
    failed = {f: error for f, error in zip(ordered, results) if error is not None}
    found = {f: failed.get(f) or next((failed[p] for p in f.parents if p in failed), None) for f in folders}
    return {f: error for f, error in found.items() if error is not None}


def refuse_linked_folders(bank_dir: Path) -> None:
    """OSError when the project folder or the bank folder of `bank_dir` is a symlink (or not a folder): an
    entry written through it would land outside the tree."""
    project = bank_dir.parent
    if not may_make_folder(os.fspath(project.parent), project.name, bank_dir.name):
        raise OSError(f"{bank_dir}: a symlink or not a folder in the memory tree; nothing is written through it")


def make_folder(path: Path) -> list[Path]:
    """`path` made with the folders it needs; the ones made, outermost first (`sync_made` makes them stay)."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    made = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
            made.append(folder)
        except FileExistsError:
            pass
    return made


def sync_made(made: list[Path]) -> None:
    """Each folder `make_folder` made, durable in its parent; raises what kept one from it."""
    for folder in made:
        if (error := fsync_dir(folder.parent)) is not None:
            raise error


class _Pool:
    """Up to SYNC_THREADS threads that run the calls handed to them: what `concurrent.futures` would do here,
    without the imports it brings (logging, traceback, ...: 4 ms of a backfill). Threads are started as calls
    need them (starting one can take a millisecond while the read-ahead's child has the other core)."""

    def __init__(self) -> None:
        from queue import SimpleQueue

        self.jobs: SimpleQueue = SimpleQueue()
        self.threads: list = []

    def _grow(self, wanted: int) -> None:
        import threading

        while len(self.threads) < min(wanted, SYNC_THREADS):
            thread = threading.Thread(target=self._work, name="harnesslink-sync", daemon=True)
            thread.start()
            self.threads.append(thread)

    def _work(self) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                return
            fn, arg, job = item
            try:
                job[1] = fn(arg)
            except BaseException as exc:  # noqa: BLE001 - raised in the thread that waits for it
                job[2] = exc
            job[0].release()

    def start(self, fn: Callable, args: list) -> list[list]:
        """`fn(arg)` of each arg, begun; `results` waits for them."""
        import _thread

        self._grow(len(args))
        pending = []
        for arg in args:
            job = [_thread.allocate_lock(), None, None]  # (released when done, result, error)
            job[0].acquire()
            self.jobs.put((fn, arg, job))
            pending.append(job)
        return pending

    def stop(self) -> None:
        for _ in self.threads:
            self.jobs.put(None)
        for thread in self.threads:
            thread.join()

    @staticmethod
    def results(pending: list[list]) -> list:
        """Each job's result, in order, once all are done; the first error is raised."""
        for done, _, _ in pending:
            done.acquire()
        for _, _, error in pending:
            if error is not None:
                raise error
        return [result for _, result, _ in pending]


_POOL: tuple[int, _Pool] | None = None  # (pid, pool): a pass's sync threads (`stop_syncing` lets them go)


def stop_syncing() -> None:
    """The sync threads let go (at a pass's end): the next pass may fork its read-ahead only while no other
    thread runs (`banking/readahead.py`)."""
    global _POOL
    if _POOL is not None and _POOL[0] == os.getpid():
        _POOL[1].stop()
    _POOL = None


def _pool() -> _Pool:
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():  # a forked child has none of its parent's threads
        _POOL = (os.getpid(), _Pool())
    return _POOL[1]


def _temporary(bank_dir: Path, stem: str) -> Path:
    return bank_dir / f".{stem[:40]}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def rewrite(path: Path, entry: Entry) -> None:
    """Replace an entry's content in place, atomically (only Antigravity's per-conversation entry)."""
    tmp = _temporary(path.parent, path.stem)
    _write_synced(tmp, entry.text.encode())
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_synced(tmp: Path, data: bytes) -> None:
    """A temporary file with these bytes on disk, or no file at all (a full disk fails the write)."""
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _place(tmp: Path, target: Path) -> bool:
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    except OSError:
        # filesystems without hard links: all writers hold the pass lock, so check-then-rename is safe
        if target.exists():
            return False
        os.replace(tmp, target)
        return True


# what a file system that cannot sync a folder answers (Windows, some FUSE and network file systems)
_CANNOT_SYNC_FOLDERS = frozenset({errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.EACCES, errno.EPERM})


def fsync_dir(path: Path) -> OSError | None:
    """A folder's entries made durable; the error that kept them from the disk, or None (also where the file
    system cannot sync a folder, or the folder cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        os.fsync(fd)
    except OSError as exc:
        return None if exc.errno in _CANNOT_SYNC_FOLDERS else exc
    finally:
        os.close(fd)
    return None
