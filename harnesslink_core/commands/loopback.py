"""HTTP on 127.0.0.1 that no local client can stall: the server `harnesslink view` runs.

Any local process can connect to the port, token or not. One that sends nothing, half a request, a body
a byte a second, a huge header, or hundreds of connections must not keep anyone else's page from
answering, nor the command from stopping. So no thread ever waits on a client: one thread reads every
connection without blocking until its request is whole, a few threads render pages from requests held
in memory, and the first thread writes each page back; every connection has a deadline and a size
bound, and there is a cap on how many are live.
"""

from __future__ import annotations

import collections
import io
import queue
import selectors
import socket
import threading
import time
from wsgiref.simple_server import WSGIRequestHandler

MAX_CONNECTIONS = 256  # live at once; past it, the oldest one not being answered is dropped
REQUEST_SECONDS = 10.0  # to send a whole request, however it trickles in
RESPONSE_SECONDS = 30.0  # to take a whole page
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024  # every page is a GET: a body is never read
PAGE_THREADS = 4
READING, RENDERING, WRITING = "reading", "rendering", "writing"


class LoopbackServer:
    """`serve_forever` reads and writes every connection on one thread, and renders pages (wsgiref's
    handler, over the request in memory) on PAGE_THREADS more; one request per connection (HTTP/1.0,
    as wsgiref answers). The interface is socketserver's: server_port, serve_forever, shutdown,
    server_close."""

    def __init__(self, port: int = 0) -> None:
        self.socket = socket.create_server(("127.0.0.1", port), backlog=512)
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self.server_port = self.server_address[1]
        self.base_environ = {"SERVER_NAME": "127.0.0.1", "SERVER_PORT": str(self.server_port),
                             "GATEWAY_INTERFACE": "CGI/1.1", "SCRIPT_NAME": "", "CONTENT_LENGTH": "", "REMOTE_HOST": ""}
        self.app = None
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._wake_out.setblocking(False)
        self._connections: dict[socket.socket, _Connection] = {}  # the oldest first
        self._to_render: queue.SimpleQueue[_Connection | None] = queue.SimpleQueue()
        self._rendered: collections.deque[_Connection] = collections.deque()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._next_check = 0.0

    def get_app(self):  # what wsgiref's handler asks its server for
        return self.app

    def serve_forever(self, poll_interval: float = 0.2) -> None:
        renderers = [threading.Thread(target=self._render_pages, daemon=True) for _ in range(PAGE_THREADS)]
        for renderer in renderers:
            renderer.start()
        self._selector.register(self.socket, selectors.EVENT_READ)
        self._selector.register(self._wake_in, selectors.EVENT_READ)
        try:
            while not self._stopping.is_set():
                for key, _ in self._selector.select(poll_interval):
                    self._on_ready(key.fileobj)
                self._answer_rendered()
                self._drop_late(time.monotonic())
        finally:
            for _ in renderers:
                self._to_render.put(None)  # a page still being rendered is left to finish on its own
            for conn in list(self._connections.values()):
                self._close(conn)
            self._stopped.set()

    def shutdown(self) -> None:
        """Make serve_forever return, and wait for it: at once, whatever the clients do."""
        self._stopping.set()
        self._wake()
        self._stopped.wait()

    def server_close(self) -> None:
        for sock in (self.socket, self._wake_in, self._wake_out):
            sock.close()
        self._selector.close()

    def _wake(self) -> None:
        try:
            self._wake_out.send(b"\0")
        except OSError:  # full (it is awake already) or closed (it has stopped)
            pass

    def _on_ready(self, sock) -> None:
        if sock is self.socket:
            self._accept()
        elif sock is self._wake_in:
            try:
                self._wake_in.recv(4096)
            except OSError:
                pass
        elif (conn := self._connections.get(sock)) is not None:
            self._read(conn) if conn.state == READING else self._write(conn)

    def _accept(self) -> None:
        for _ in range(64):  # then serve the others: a flood of connections is a turn among many
            try:
                sock, address = self.socket.accept()
            except OSError:  # none waiting, or no descriptor free: those left wait in the backlog
                return
            if len(self._connections) >= MAX_CONNECTIONS:
                oldest = next((c for c in self._connections.values() if c.state != RENDERING), None)
                if oldest is None:
                    sock.close()
                    continue
                self._close(oldest)
            sock.setblocking(False)
            self._connections[sock] = _Connection(sock, address, time.monotonic() + REQUEST_SECONDS)
            self._selector.register(sock, selectors.EVENT_READ)

    def _read(self, conn: _Connection) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn)
            return
        conn.received += data
        try:
            whole = conn.whole()
        except _Refused as refused:
            self._respond(conn, refused.response())
            return
        if whole:
            self._selector.unregister(conn.sock)
            conn.state = RENDERING
            self._to_render.put(conn)

    def _render_pages(self) -> None:
        while (conn := self._to_render.get()) is not None:
            try:
                conn.response = _Exchange(bytes(conn.received), conn.address, self).wfile.getvalue()
            except Exception:
                conn.response = _Refused(500, "Internal Server Error").response()
            self._rendered.append(conn)
            self._wake()

    def _answer_rendered(self) -> None:
        while self._rendered:
            conn = self._rendered.popleft()
            if conn.sock in self._connections:
                self._respond(conn, conn.response)

    def _respond(self, conn: _Connection, response: bytes) -> None:
        conn.state, conn.outgoing = WRITING, memoryview(response)
        conn.deadline = time.monotonic() + RESPONSE_SECONDS
        self._write(conn)
        if conn.sock in self._connections:
            try:
                self._selector.modify(conn.sock, selectors.EVENT_WRITE)
            except KeyError:  # it was not being read (rendered)
                self._selector.register(conn.sock, selectors.EVENT_WRITE)

    def _write(self, conn: _Connection) -> None:
        try:
            sent = conn.sock.send(conn.outgoing)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            sent = len(conn.outgoing)
        conn.outgoing = conn.outgoing[sent:]
        if not conn.outgoing:
            self._close(conn)

    def _drop_late(self, now: float) -> None:
        if now < self._next_check:
            return
        self._next_check = now + 0.1
        for conn in [c for c in self._connections.values() if c.state != RENDERING and c.deadline < now]:
            self._close(conn)

    def _close(self, conn: _Connection) -> None:
        self._connections.pop(conn.sock, None)
        try:
            self._selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()


class _Connection:
    def __init__(self, sock: socket.socket, address: tuple, deadline: float) -> None:
        self.sock, self.address, self.deadline = sock, address, deadline
        self.state = READING
        self.received = bytearray()
        self.response = b""
        self.outgoing = memoryview(b"")

    def whole(self) -> bool:
        """Whether the request is all in: its head, and the body its Content-Length announces.
        Raises _Refused for one too big to take, or one whose body it cannot tell the end of."""
        ends = [at + len(mark) for mark in (b"\r\n\r\n", b"\n\n") if (at := self.received.find(mark)) >= 0]
        if not ends:
            if len(self.received) > MAX_HEAD:
                raise _Refused(431, "Request Header Fields Too Large")
            return False
        head_end = min(ends)
        if head_end > MAX_HEAD:
            raise _Refused(431, "Request Header Fields Too Large")
        length = 0
        for line in bytes(self.received[:head_end]).splitlines()[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"transfer-encoding":
                raise _Refused(501, "Not Implemented")
            if name == b"content-length":
                if not value.strip().isdigit():
                    raise _Refused(400, "Bad Request")
                length = max(length, int(value.strip()[:12]))
        if length > MAX_BODY:
            raise _Refused(413, "Content Too Large")
        return len(self.received) >= head_end + length


class _Refused(Exception):
    """A request answered before any page sees it: too big, or unreadable."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason

    def response(self) -> bytes:
        body = f"{self.status} {self.reason}\n".encode()
        return (f"HTTP/1.0 {self.status} {self.reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


class _Exchange(WSGIRequestHandler):
    """wsgiref's handler for one request already read whole, writing its response to memory."""

    def __init__(self, request: bytes, client_address: tuple, server: LoopbackServer) -> None:
        self.rfile, self.wfile = io.BytesIO(request), io.BytesIO()
        self.client_address, self.server, self.request = client_address, server, None
        self.handle()

    def log_message(self, format: str, *args: object) -> None:
        pass  # a request line holds the token: not for the terminal
