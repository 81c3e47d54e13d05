"""A real HTTP server on a free port that answers from a script (503 with Retry-After, then
201, or a connection dropped after the request arrived) and records what it received: for
client tests of what PCM cannot be made to do on demand."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DROP = "drop"  # close the connection without an answer, once the request has arrived


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait this long before answering
    raw: bytes | None = None  # a body sent as it is, instead of `body` as JSON


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float  # time.monotonic() when it arrived


class Script:
    def __init__(self, replies: list[Reply | str]) -> None:
        self.replies = list(replies)
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.url = ""

    def next(self, got: Received) -> Reply | str:
        with self.lock:
            self.received.append(got)
            # The last reply repeats for every later request.
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(size) if size else b""
            got = Received(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                json.loads(raw) if raw else None,
                time.monotonic(),
            )
            reply = script.next(got)
            if reply == DROP or not isinstance(reply, Reply):
                self.close_connection = True
                self.connection.close()
                return
            time.sleep(reply.delay_s)
            body = reply.raw if reply.raw is not None else b""
            if reply.raw is None and reply.body is not None:
                body = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet

    return Handler


@contextmanager
def scripted(replies: list[Reply | str]) -> Iterator[Script]:
    script = Script(replies)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    server.daemon_threads = True
    script.url = f"http://127.0.0.1:{server.server_address[1]}"
    # serve_forever checks for shutdown every poll_interval (0.5 s by default): each
    # scripted server then cost half a second to stop.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield script
    finally:
        server.shutdown()
        server.server_close()
