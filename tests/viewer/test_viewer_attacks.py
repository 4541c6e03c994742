"""`harnesslink view` under a hostile local client: any process on the machine can connect to its port.

Through a real `harnesslink view` process: a client that sends nothing, half a request, a body a byte at
a time, a huge header, or hundreds of connections holds up no one else's page, and Ctrl-C or SIGTERM
stops the command within a second whatever such clients do. And the viewer never follows a symlink in
the memory tree nor opens what is not a regular file."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from harnesslink_core.store.injected import Given
from memory_helpers import write_entry
from viewer.test_view import SHOP, SHOP_SLUG, seed, start_view

PROMPT = 1.0  # seconds a normal page may take while attackers are connected
OUTSIDE_WORDS = "zanzibar quokka"  # only in entries that live outside the tree


class Viewer:
    """A `harnesslink view` process, its port and its token's path."""

    def __init__(self, tmp_path: Path) -> None:
        self.proc, url = start_view(tmp_path, "--no-open")
        parts = urlsplit(url)
        self.port, self.root = parts.port, parts.path  # root: `/<token>/`

    def get(self, path: str = "", *, host: str | None = None, timeout: float = 10) -> tuple[int, str]:
        """GET `path` under the token (one starting with `/`: as it is)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.putrequest("GET", path if path.startswith("/") else self.root + path, skip_host=True)
            conn.putheader("Host", host or f"127.0.0.1:{self.port}")
            conn.endheaders()
            response = conn.getresponse()
            return response.status, response.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def answers_promptly(self, path: str = "") -> float:
        """Seconds a normal page took; the test fails if it is not 200 within PROMPT."""
        began = time.monotonic()
        status, body = self.get(path, timeout=PROMPT)
        took = time.monotonic() - began
        assert status == 200 and "HarnessLink" in body, (status, body[:200])
        assert took < PROMPT, took
        return took

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def stop(self, number: signal.Signals = signal.SIGTERM) -> float:
        """Seconds from the signal to the process's exit (0 expected)."""
        began = time.monotonic()
        self.proc.send_signal(number)
        assert self.proc.wait(timeout=10) == 0
        return time.monotonic() - began

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def viewer(tmp_path: Path):
    seed(tmp_path)
    served = Viewer(tmp_path)
    try:
        served.answers_promptly()  # the first page brings the index up to date: not what is timed below
        yield served
    finally:
        served.close()


# --- what the attackers do, each while a normal page is asked for -------------------------------------------

@contextmanager
def idle(viewer: Viewer, count: int = 1):
    """Connections that send nothing."""
    with ExitStack() as stack:
        yield [stack.enter_context(viewer.connect()) for _ in range(count)]


@contextmanager
def half_request(viewer: Viewer):
    with viewer.connect() as sock:
        sock.sendall(f"GET {viewer.root} HTTP/1.1\r\nHost: 127.0.0.1:{viewer.port}\r\n".encode())
        yield [sock]


@contextmanager
def trickle(viewer: Viewer, head: bytes):
    """`head` once, then one byte every tenth of a second for as long as the test runs."""
    done = threading.Event()
    with viewer.connect() as sock:
        sock.sendall(head)

        def drip() -> None:
            while not done.wait(0.1):
                try:
                    sock.sendall(b"a")
                except OSError:  # the server gave up on us: as it may
                    return

        dripping = threading.Thread(target=drip, daemon=True)
        dripping.start()
        try:
            yield [sock]
        finally:
            done.set()
            dripping.join()


def slow_body(viewer: Viewer):
    return trickle(viewer, f"POST {viewer.root} HTTP/1.1\r\nHost: 127.0.0.1:{viewer.port}\r\n"
                           f"Content-Length: 100000\r\n\r\n".encode())


def slow_header(viewer: Viewer):
    return trickle(viewer, f"GET {viewer.root} HTTP/1.1\r\nHost: 127.0.0.1:{viewer.port}\r\nX-Slow: ".encode())


@contextmanager
def huge_header(viewer: Viewer):
    """Sixteen megabytes of one header, sent as fast as the server takes them."""
    with viewer.connect() as sock:
        sock.sendall(f"GET {viewer.root} HTTP/1.1\r\nHost: 127.0.0.1:{viewer.port}\r\nX-Huge: ".encode())

        def flood() -> None:
            try:
                for _ in range(256):
                    sock.sendall(b"h" * 65536)
            except OSError:
                pass

        flooding = threading.Thread(target=flood, daemon=True)
        flooding.start()
        yield [sock]


ATTACKS = {
    "an idle connection": idle,
    "half a request": half_request,
    "a body a byte at a time": slow_body,
    "a header a byte at a time": slow_header,
    "a huge header": huge_header,
    "200 connections at once": lambda viewer: idle(viewer, 200),
    "more connections than it keeps": lambda viewer: idle(viewer, 700),
}


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_a_normal_page_answers_within_a_second_while_a_client_stalls(viewer: Viewer, attack: str) -> None:
    with ATTACKS[attack](viewer):
        for path in ["", f"p/{SHOP_SLUG}", "search?q=checkout+rounding"]:
            viewer.answers_promptly(path)
            time.sleep(0.3)  # the attacker has had time to stall a one-at-a-time server


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_it_within_a_second_with_stalling_clients_connected(viewer: Viewer, number) -> None:
    with idle(viewer, 20), half_request(viewer), slow_body(viewer):
        time.sleep(0.3)
        assert viewer.stop(number) < PROMPT
    assert "stopped" in viewer.proc.stdout.read()
    with pytest.raises(ConnectionRefusedError):
        viewer.connect().close()


def test_an_idle_client_is_dropped_after_its_deadline(viewer: Viewer) -> None:
    """A connection's time to send its request is bounded (ten seconds): a stalled one is closed, not kept."""
    with idle(viewer) as (sock,):
        sock.settimeout(15)
        began = time.monotonic()
        assert sock.recv(1) == b""
        assert 9 < time.monotonic() - began < 12


def test_the_token_and_host_checks_hold_for_every_concurrent_request(viewer: Viewer) -> None:
    """Many clients at once, some with the token and the right Host, some without either: each gets its own answer."""
    page = f"{viewer.root}p/{SHOP_SLUG}"
    kinds = {"good": (page, None), "no token": (f"/x{'y' * 31}/p/{SHOP_SLUG}", None),
             "rebound host": (page, f"attacker.example:{viewer.port}")}
    wanted = {"good": 200, "no token": 404, "rebound host": 404}
    answers: list[tuple[str, int, str]] = []

    def ask(kind: str) -> None:
        path, host = kinds[kind]
        status, body = viewer.get(path, host=host)
        answers.append((kind, status, body))

    with idle(viewer, 50):
        askers = [threading.Thread(target=ask, args=(kind,)) for kind in list(kinds) * 20]
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join(30)
    assert len(answers) == 60
    for kind, status, body in answers:
        assert status == wanted[kind], (kind, status)
        assert ("Fix the checkout rounding bug" in body) == (kind == "good"), kind


# --- nothing through a symlink, nothing that is not a regular file ------------------------------------------

def test_what_is_reached_through_a_symlink_or_is_no_regular_file_is_not_listed_searched_or_served(
        tmp_path: Path) -> None:
    """A symlinked project folder, a symlinked bank/ folder (both leading out of the tree), a FIFO as an entry."""
    locs, fix, _ = seed(tmp_path)
    fifo = fix.parent / "2026-11-28T10-00-00-000Z--a-pipe.md"
    os.mkfifo(fifo)
    outside = tmp_path / "outside"
    outside.mkdir()
    smuggled = {}
    for folder, what in [("/code/elsewhere", "project"), ("/code/bankless", "bank")]:
        entry = write_entry(locs, folder, title=f"Smuggled {what} note", result=OUTSIDE_WORDS,
                            ts="2026-11-27T10:00:00.000Z")
        slug = entry.parent.parent.name
        linked = locs.memories / slug if what == "project" else locs.memories / slug / "bank"
        shutil.move(linked, outside / what)
        linked.symlink_to(outside / what, target_is_directory=True)
        smuggled[slug] = entry.name
    (locs.memories / SHOP_SLUG / "linked.txt").write_text("/code/lib\n/code/elsewhere\n/code/bankless\n")
    Given(locs, "codex", "s-smuggled").add([f"{slug}/bank/{name}" for slug, name in smuggled.items()])
    served = Viewer(tmp_path)
    try:
        pages = ["", "search?q=" + quote(OUTSIDE_WORDS), f"search?q={quote(OUTSIDE_WORDS)}&p={SHOP_SLUG}",
                 f"p/{SHOP_SLUG}", "given"]
        for path in pages:
            status, body = served.get(path)
            assert status == 200, path
            assert "Smuggled" not in body and not any(slug in body for slug in smuggled), path
        for slug, name in smuggled.items():
            for path in [f"p/{slug}", f"p/{slug}/brief", f"entry/{slug}/bank/{quote(name)}"]:
                assert served.get(path)[0] == 404, path
        assert served.get(f"entry/{SHOP_SLUG}/bank/{quote(fifo.name)}", timeout=PROMPT)[0] == 404
        for path in [f"p/{SHOP_SLUG}", "search?q=checkout+rounding", f"entry/{SHOP_SLUG}/bank/{quote(fix.name)}"]:
            assert "Fix the checkout rounding bug" in served.get(path, timeout=PROMPT)[1], path  # the rest still is
    finally:
        served.close()

