"""Bank entries: caps that say where they cut, the 1 MB cap, names, and secrets that never reach disk."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import frontmatter
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harnesslink_core.model import Action, Turn
from harnesslink_core.redact import redact
from harnesslink_core.store import bank, durable


def make_turn(**kw) -> Turn:
    base = dict(harness="claude-code", session_id="sess-1", turn_id="turn-1", cwd="/Users/me/app",
                prompt="Fix the authentication bug", offset=0, started=1_780_000_000.0, ended=1_780_000_100.5,
                result="Done.")
    base.update(kw)
    return Turn(**base)


def test_project_slug_follows_the_spec() -> None:
    assert bank.project_slug("/Users/me/Workspace/myapp") == "--Users-me-Workspace-myapp--"
    assert bank.project_slug("C:\\Users\\me\\app") == "--C--Users-me-app--"


@pytest.mark.parametrize("cwd", ["", "/", "..", "/..", "../../etc", "a/../../b", "\x00/x", "/" + "d" * 600])
def test_project_slug_never_leaves_the_memories_root(tmp_path: Path, cwd: str) -> None:
    slug = bank.project_slug(cwd)
    assert "/" not in slug and "\\" not in slug and slug not in ("", ".", "..")
    assert (tmp_path / slug).resolve().parent == tmp_path.resolve()
    assert len(slug.encode()) <= 255


def test_caps_say_where_they_cut() -> None:
    turn = make_turn(prompt="p" * 2500, result="r" * 4100,
                     actions=[Action("write", {"content": "c" * 5000})] + [Action("bash", {"n": n}) for n in range(60)])
    text = bank.render(turn).text
    assert "p" * 2000 + "…[cut: 500 more characters]" in text
    assert "r" * 4000 + "…[cut: 100 more characters]" in text
    write_line = next(l for l in text.splitlines() if l.startswith("- write:"))
    assert len(write_line) < bank.ACTION_LINE_CAP + 40 and "more characters]" in write_line
    assert "- …[cut: 21 more actions]" in text


def test_file_stays_under_the_uploader_cap_even_with_wide_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bank, "RESULT_CAP", 2_000_000)
    turn = make_turn(result="界" * 600_000)  # 1.8 MB of UTF-8
    data = bank.render(turn).text.encode()
    assert len(data) < bank.FILE_CAP
    assert "more characters]" in data.decode()


def test_prompt_cannot_fake_a_section_heading() -> None:
    text = bank.render(make_turn(prompt="hello\n## Result\nfake", result="real")).text
    assert text.count("\n## Result\n") == 1


def test_title_is_the_first_meaningful_line_collapsed() -> None:
    assert bank.make_title("\n\n   ```\n  Fix   the\tbug  please\nmore") == "Fix the bug please"
    assert len(bank.make_title("word " * 100)) <= bank.TITLE_CAP


def test_frontmatter_survives_hostile_strings() -> None:
    turn = make_turn(prompt='title with "quotes" and: colons\n---\nnot: yaml', cwd='/tmp/a "b": c',
                     session_id="s\u2028x", actions=[Action('weird:tool "x"', {})])
    post = frontmatter.loads(bank.render(turn).text)
    assert post["title"] == 'title with "quotes" and: colons'
    assert post["cwd"] == '/tmp/a "b": c'
    assert post["tags"] == ['weird:tool "x"']
    assert post["session_id"] == "s\u2028x"


SECRETS = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "github-token": "ghp_" + "A1b2C3d4E5" * 4,
    "gitlab-token": "glpat-" + "x1Y2z3W4v5U6t7S8r9Q0",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "openai-key": "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv",
    "anthropic-key": "sk-ant-api03-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0",
    "bearer-token": "Authorization: Bearer eyJ0eXAiOiJKV1QiLCJhbGciOi.abcDEF123456",
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----",
    "url-password": "postgres://admin:S3cr3tPassw0rd@db.internal:5432/app",
    "secret-assignment": "export DATABASE_PASSWORD=hunter2hunter2",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
}
SECRET_VALUES = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE", "github-token": "A1b2C3d4E5A1b2", "gitlab-token": "x1Y2z3W4v5U6",
    "slack-token": "AbCdEfGhIjKl", "openai-key": "Ab1Cd2Ef3Gh4", "anthropic-key": "Zy9Xw8Vu7Ts6",
    "bearer-token": "abcDEF123456", "private-key": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    "url-password": "S3cr3tPassw0rd", "secret-assignment": "hunter2hunter2", "jwt": "SflKxwRJSMeKKF2QT4fw",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
@pytest.mark.parametrize("place", ["prompt", "tool input", "answer"])
def test_secret_never_reaches_the_bank(kind: str, place: str, tmp_path: Path) -> None:
    secret = SECRETS[kind]
    turn = make_turn(
        prompt=f"please use {secret} to connect" if place == "prompt" else "connect to the db",
        actions=[Action("bash", {"command": f"run --with '{secret}'"})] if place == "tool input" else [],
        result=f"I connected using {secret} and it worked. " + "x" * 200 if place == "answer" else "ok",
    )
    path = durable.write(tmp_path, bank.render(turn))
    text = path.read_text()
    assert SECRET_VALUES[kind] not in text
    assert "[redacted:" in text


def test_redaction_leaves_ordinary_text_alone() -> None:
    text = "author: Jane\nmax_tokens=4096\ntoken_count=5000\nthe secret is out\npassing tests: 5\nhttp://example.com/a:b"
    assert redact(text) == text


def test_write_is_atomic_and_leaves_no_temporary(tmp_path: Path) -> None:
    folder = tmp_path / "bank"
    path = durable.write(folder, bank.render(make_turn(result="x" * 300)))
    assert [p.name for p in folder.iterdir()] == [path.name]
    again = durable.write(folder, bank.render(make_turn(result="x" * 300)))
    assert again == path and len(list(folder.iterdir())) == 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.sampled_from(sorted(SECRETS)), st.text(max_size=80))
def test_the_quick_filter_never_hides_a_secret(before: str, kind: str, after: str) -> None:
    from harnesslink_core import redact as module
    from harnesslink_core.redaction import engine

    text = before + " " + SECRETS[kind] + " " + after
    slow = text
    for name, pattern in module.PATTERNS:
        slow = pattern.sub(lambda m, k=name: engine._sub(k, m), slow)
    assert redact(text) == slow


LEARNING = dict(title="Package manager", tags=["build", "pnpm", "ci-cd"], at=1_790_000_061.123, cwd="/work/proj",
                session_id="thread-9", harness="codex", source="mcp:codex")


def test_a_learning_is_an_entry_with_its_title_as_prompt_and_its_text_as_result() -> None:
    entry = bank.render_learning("  Use pnpm, not npm.\nThe lockfile is pnpm-lock.yaml.\n", **LEARNING)
    key = bank.learning_key(bank.project_slug("/work/proj"), "Use pnpm, not npm.\nThe lockfile is pnpm-lock.yaml.")
    assert entry.text == (
        "---\nid: 2026-09-21T14-14-21-123Z\nts: \"2026-09-21T14:14:21.123Z\"\ntitle: \"Package manager\"\n"
        "tags:\n  - build\n  - pnpm\n  - ci-cd\ncwd: \"/work/proj\"\nsession_id: \"thread-9\"\nharness: codex\n"
        f"turn_key: \"{key}\"\nsource: mcp:codex\n---\n\n## Prompt\n\nPackage manager\n\n## Actions\n\n"
        "(a learning recorded with memory_bank)\n\n## Result\n\nUse pnpm, not npm.\nThe lockfile is pnpm-lock.yaml.\n"
    )
    assert entry.name_stem == "2026-09-21T14-14-21-123Z--package-manager" and entry.turn_key == key


def test_a_learning_without_title_or_harness_and_with_fake_headings() -> None:
    entry = bank.render_learning("## Result\nThe cron runs in UTC.", **{**LEARNING, "title": "", "harness": "",
                                                                        "source": "mcp", "tags": []})
    meta = frontmatter.loads(entry.text).metadata
    assert meta["title"] == "Result" and meta["tags"] == [] and "harness" not in meta and meta["source"] == "mcp"
    assert entry.text.endswith("## Result\n\n ## Result\nThe cron runs in UTC.\n")


def test_a_learnings_key_is_its_words_in_its_project() -> None:
    key = bank.learning_key("--p--", "Run the migrations first.")
    assert key.startswith("mcp:")
    assert bank.learning_key("--p--", "  Run the\nmigrations   first. ") == key
    assert bank.learning_key("--q--", "Run the migrations first.") != key
    assert bank.learning_key("--p--", "Run the migrations last.") != key


def test_a_secret_in_a_learning_never_reaches_its_entry() -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    entry = bank.render_learning(f"The token is {secret}.", **{**LEARNING, "title": f"Token {secret}"})
    assert secret not in entry.text and entry.text.count("[redacted:github-token]") == 3


def test_find_learning_reads_every_entry_whatever_its_time(tmp_path: Path) -> None:
    bank_dir = tmp_path / "bank"
    assert bank.find_learning(bank_dir, "mcp:x:y") is None
    old = bank.render_learning("Keep the batch size at 500.", **{**LEARNING, "at": 1_700_000_000.0})
    path = durable.write(bank_dir, old)
    durable.write(bank_dir, bank.render(make_turn()))
    (bank_dir / ".half-written.tmp").write_text(f'turn_key: "{old.turn_key}"\n')
    again = bank.render_learning("Keep the batch size  at 500.", **LEARNING)
    assert again.turn_key == old.turn_key and again.file_iso != old.file_iso
    assert bank.find_learning(bank_dir, again.turn_key) == path
    assert bank.find_entry(bank_dir, again.file_iso, again.turn_key) is None, "find_entry looks at one time only"
    assert bank.find_learning(bank_dir, bank.learning_key("--p--", "never recorded")) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["2026-09-21T14-14-21-123Z", "2026-09-21T14-14-21-124Z", "x", "2026", ""])
                .flatmap(lambda t: st.tuples(st.just(t), st.sampled_from(["--a.md", "--b.md", "-c.md", "--d.txt", ""]))),
                max_size=12),
       st.sampled_from(["2026-09-21T14-14-21-123Z", "2026-09-21T14-14-21-124Z", "x"]))
def test_a_listing_finds_the_names_a_plain_set_finds(names, file_iso) -> None:
    names = [a + b for a, b in names]
    listing = bank.Listing(names[:len(names) // 2])
    for name in names[len(names) // 2:]:
        listing.add(name)
    assert listing == set(names)
    by_time = [n for n in listing.by_time.get(file_iso, []) if n.endswith(".md")]
    assert sorted(by_time) == sorted(n for n in set(names) if n.startswith(file_iso + "--") and n.endswith(".md"))


@pytest.mark.parametrize("files", [2, 17, 40])
def test_sync_staged_tells_each_file_its_own_error(tmp_path: Path, files: int) -> None:
    paths = [tmp_path / f".staged-{i}.tmp" for i in range(files)]
    for i, path in enumerate(paths):
        if i % 5 != 3:  # the others are gone before they sync
            path.write_text("bytes")
    errors = durable.sync_staged(paths)
    assert [error is not None for error in errors] == [i % 5 == 3 for i in range(files)]


def _staged(folder: Path, files: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f".staged-{i}.tmp" for i in range(files)]
    for path in paths:
        path.write_text("bytes")
    return paths


def _kernel_reports_syncfs_errors() -> bool:
    import os
    import sys

    return sys.platform == "linux" and tuple(int(p) for p in os.uname().release.split(".")[:2]) >= (5, 17)


def test_a_large_batch_is_synced_by_one_syncfs_and_no_fsync_per_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(durable, "_dirty_bytes", lambda: 0)  # whatever else this machine is writing
    monkeypatch.setattr(durable, "_file_system", lambda device: "ext4")  # wherever the tests run
    watch = durable.Writeback.watch(tmp_path / "bank", durable.SYNCFS_FILES)
    assert (watch is not None) == _kernel_reports_syncfs_errors()
    if watch is None:
        return
    try:
        paths = _staged(tmp_path / "bank", durable.SYNCFS_FILES)
        calls, per_file = [], []
        real = watch._syncfs
        monkeypatch.setattr(watch, "_syncfs", lambda fd: calls.append(fd) or real(fd))
        monkeypatch.setattr(durable, "_sync", lambda path: per_file.append(path))
        ran = []
        assert durable.sync_staged(paths, meanwhile=lambda: ran.append(1), writeback=watch) == [None] * len(paths)
        assert calls == [watch.fd] and per_file == [] and ran == [1]
        durable.fsync_dirs({tmp_path / "bank"}, watch)
        assert calls == [watch.fd, watch.fd]
    finally:
        watch.close()


@contextmanager
def _watching(tmp_path: Path, monkeypatch, syncfs, files: int = 20):
    """A writeback watch on tmp_path/bank whatever this machine is (kernel, file system, writeback), with
    `syncfs` for the system call."""
    monkeypatch.setattr(durable, "_SYNCFS", [syncfs])
    monkeypatch.setattr(durable, "_dirty_bytes", lambda: 0)
    monkeypatch.setattr(durable, "_file_system", lambda path: "ext4")
    watch = durable.Writeback.watch(tmp_path / "bank", files)
    try:
        yield watch
    finally:
        watch.close()


def test_a_failed_syncfs_falls_back_to_each_files_own_error(tmp_path: Path, monkeypatch) -> None:
    with _watching(tmp_path, monkeypatch, lambda fd: -1) as watch:  # what an EIO in writeback makes syncfs answer
        paths = _staged(tmp_path / "bank", 20)
        for path in paths[3::5]:
            path.unlink()
        ran = []
        errors = durable.sync_staged(paths, meanwhile=lambda: ran.append(1), writeback=watch)
        assert [error is not None for error in errors] == [i % 5 == 3 for i in range(20)]
        assert ran == [1]  # run once, not again by the fallback


def test_files_on_another_file_system_are_each_fsynced(tmp_path: Path, monkeypatch) -> None:
    calls = []
    with _watching(tmp_path, monkeypatch, lambda fd: calls.append(fd) or 0) as watch:
        watch.device = -1  # as if the watched folder were another mount than the batch's
        per_file = []
        monkeypatch.setattr(durable, "_sync", lambda path: per_file.append(path))
        paths = _staged(tmp_path / "bank", 20)
        assert durable.sync_staged(paths, writeback=watch) == [None] * 20
        assert calls == [] and sorted(per_file) == sorted(paths)


@pytest.mark.parametrize("why", ["small batch", "old kernel", "5.15 kernel", "much to write back", "not Linux",
                                 "FUSE", "unknown file system"])
def test_no_syncfs_where_it_is_not_the_faster_or_not_the_sure_way(tmp_path: Path, monkeypatch, why: str) -> None:
    import os
    import sys

    files = 20
    monkeypatch.setattr(durable, "_SYNCFS", [])
    monkeypatch.setattr(durable, "_dirty_bytes", lambda: 0)
    monkeypatch.setattr(durable, "_file_system", lambda device: "ext4")
    if why == "small batch":
        files = durable.SYNCFS_FILES - 1
        monkeypatch.setattr(durable, "_SYNCFS", [lambda fd: 0])
    elif why in ("old kernel", "5.15 kernel"):  # 5.15: syncfs did not say when the journal's commit failed
        monkeypatch.setattr(sys, "platform", "linux")
        release = "5.4.0-150-generic" if why == "old kernel" else "5.15.0-91-generic"
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", release, "#1", "x86_64")))
    elif why == "much to write back":
        monkeypatch.setattr(durable, "_SYNCFS", [lambda fd: 0])
        monkeypatch.setattr(durable, "_dirty_bytes", lambda: durable.SYNCFS_DIRTY_MAX + 1)
    elif why in ("FUSE", "unknown file system"):  # its syncfs may neither write back nor commit
        monkeypatch.setattr(durable, "_SYNCFS", [lambda fd: 0])
        monkeypatch.setattr(durable, "_file_system", lambda path: "fuse.sshfs" if why == "FUSE" else "")
    else:
        monkeypatch.setattr(sys, "platform", "darwin")
    assert durable.Writeback.watch(tmp_path / "bank", files) is None


def test_the_file_system_type_is_the_mount_tables(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        assert durable._file_system(tmp_path) == ""
        return
    for path in (tmp_path, Path("/proc/self"), Path("/")):
        got = durable._file_system(path)
        if shutil.which("findmnt"):
            out = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(path)], capture_output=True,
                                 text=True, check=True)
            assert got == out.stdout.strip().splitlines()[-1], path
        else:
            assert got, path
    assert durable._file_system(Path("/proc/self")) == "proc"


def test_a_mount_points_escapes_are_read() -> None:
    assert durable._unescape(r"/mnt/my\040disk\011x") == "/mnt/my disk\tx"
    assert durable._unescape("/plain") == "/plain"


def test_a_failing_batch_step_leaves_no_syncfs_thread_behind(tmp_path: Path, monkeypatch) -> None:
    import threading
    import time

    def broken() -> None:
        raise KeyError("a bug of ours in the columns")

    with _watching(tmp_path, monkeypatch, lambda fd: time.sleep(0.2) or 0, files=2) as watch:
        paths = _staged(tmp_path / "bank", 2)
        with pytest.raises(KeyError):
            durable.sync_staged(paths, meanwhile=broken, writeback=watch)
        assert not [t for t in threading.enumerate() if t.name == "harnesslink-syncfs"]


def test_no_folders_no_syncfs(tmp_path: Path, monkeypatch) -> None:
    calls = []
    with _watching(tmp_path, monkeypatch, lambda fd: calls.append(fd) or 0, files=2) as watch:
        assert durable.fsync_dirs(set(), watch) == {} and calls == []  # every entry of the batch was there already


def test_a_folder_whose_sync_fails_is_reported_with_its_error(tmp_path: Path, monkeypatch) -> None:
    import errno
    import os

    folders = {tmp_path / "a" / "bank", tmp_path / "b" / "bank"}
    for folder in folders:
        folder.mkdir(parents=True)
    real_fsync = os.fsync
    failing = os.open(tmp_path / "a" / "bank", os.O_RDONLY)
    failing_inode = os.fstat(failing).st_ino
    os.close(failing)

    def fsync(fd: int) -> None:
        if os.fstat(fd).st_ino == failing_inode:
            raise OSError(errno.EIO, "I/O error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    errors = durable.fsync_dirs(folders)
    assert list(errors) == [tmp_path / "a" / "bank"] and errors[tmp_path / "a" / "bank"].errno == errno.EIO

    def unsupported(fd: int) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "fsync", unsupported)  # a file system that cannot sync a folder at all
    assert durable.fsync_dirs(folders) == {}


def test_a_batchs_new_folders_are_synced_into_their_parents(tmp_path: Path, monkeypatch) -> None:
    import errno

    made: list[Path] = []
    bank_dir = tmp_path / "memories" / "--work-new--" / "bank"
    durable.stage(bank_dir, bank.render(make_turn(cwd="/work/new")), made)
    durable.stage(bank_dir, bank.render(make_turn(cwd="/work/new", turn_id="turn-2")), made)
    assert made == [tmp_path / "memories", tmp_path / "memories" / "--work-new--", bank_dir]  # made once
    synced = []
    real = durable.fsync_dir
    monkeypatch.setattr(durable, "fsync_dir", lambda path: synced.append(Path(path)) or real(path))
    assert durable.fsync_dirs({bank_dir}, None, made) == {}
    assert sorted(synced) == sorted([tmp_path, *made])  # each new folder's entry in its parent, and the bank's own
    failure = OSError(errno.EIO, "I/O error")
    monkeypatch.setattr(durable, "fsync_dir", lambda path: failure if Path(path) == tmp_path else None)
    assert durable.fsync_dirs({bank_dir}, None, made) == {bank_dir: failure}  # its project may not stay: not counted
    assert durable.fsync_dirs({bank_dir}, None) == {}  # a folder there already needs only its own sync


def test_a_new_project_folder_is_synced_into_its_parent(tmp_path: Path, monkeypatch) -> None:
    import os

    synced = []
    real = durable.fsync_dir
    monkeypatch.setattr(durable, "fsync_dir", lambda path: synced.append(Path(path)) or real(path))
    bank_dir = tmp_path / "memories" / "--work-new--" / "bank"
    path = durable.write(bank_dir, bank.render(make_turn(cwd="/work/new")))
    assert path.parent == bank_dir and os.path.isfile(path)
    # the new folders' entries in their parents, then the entry's in its folder
    assert synced == [tmp_path, tmp_path / "memories", tmp_path / "memories" / "--work-new--", bank_dir]


def test_dirty_bytes_reads_the_kernels_figure() -> None:
    import sys

    if sys.platform != "linux":
        assert durable._dirty_bytes() > durable.SYNCFS_DIRTY_MAX
        return
    fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    near = (int(fields["Dirty"].split()[0]) + int(fields["Writeback"].split()[0])) << 10
    assert abs(durable._dirty_bytes() - near) < 64 << 20
