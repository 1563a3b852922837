"""How HTTP requests reach the API server: two transports with one method.

``HttpTransport`` (kubeconfigs with plain credentials, and in-cluster config) uses the standard
library's ``http.client`` (no protocol code of ours: status line, headers, chunked bodies are
its job) on kept-alive connections. ``ClientTransport`` uses the kubernetes client's urllib3
pool, whose configuration refreshes exec and auth-provider credentials. Both send the headers
given (repeats allowed) and return ``(status, body bytes)``; failures raise (``OSError``,
``http.client.HTTPException``, urllib3's errors, ``ResponseTooLarge``). ``stream`` (a WATCH) returns
``(status, Stream)``: the body read as it arrives, on a connection of its own.

Bounds, on both: ``timeout`` is a deadline for the whole request (connect, send, headers,
body, to its last byte): a watchdog shuts the socket down when it passes, so a server dripping
one byte at a time cannot stretch it, and a body still coming then is abandoned (a socket shut down
for reading still takes what keeps arriving); a body larger than ``MAX_BODY`` is refused.
"""

import socket
import threading
import time
from urllib.parse import urlsplit

from kubectl_safety.cluster import threads

MAX_IDLE = 32  # kept-alive connections (the drain executor runs up to 32 requests at once)
MAX_BODY = 512 * 1024 * 1024  # one response (a 500-object page with managedFields is ~10 MB)
IDLE_TIMEOUT = 60.0  # one socket operation, when --request-timeout is 0 (none)
DEFAULT_DEADLINE = 600.0  # one whole request, when --request-timeout is 0 (none)
_CHUNK = 1 << 20
_STREAM_PIECE = 64 * 1024  # at most this much of a streamed body per read (less when less has come)


class ResponseTooLarge(ConnectionError):
    """The server sent more than ``MAX_BODY`` bytes."""


class DeadlineExceeded(TimeoutError):
    """The whole request took longer than its deadline."""


class Stream:
    """A response body read line by line as it arrives (watch events are one JSON object a line).

    ``pieces``: the body's bytes as they come. ``stop`` wakes a reader blocked on the socket and
    may run on any thread (``close()``); ``release`` frees the connection, on the reading thread
    only (a client's response object is not safe to close under a read). A line longer than
    ``MAX_BODY`` raises ``ResponseTooLarge``; ``deadline`` (seconds) stops the stream when it passes.
    """

    def __init__(self, pieces, stop, release, deadline=None):
        self._pieces, self._stop, self._release = pieces, stop, release
        self._closed = self._reading = False
        self._watchdog = _Watchdog(deadline, stop) if deadline else None

    def lines(self):
        """Non-blank lines (bytes, without the newline) until the server ends the body or ``close()``."""
        self._reading, pending, size = True, [], 0
        try:
            for piece in self._pieces:
                if self._watchdog is not None and self._watchdog.fired:  # a body still trickling in
                    return
                if b"\n" not in piece:  # (a line arriving in many pieces is joined once)
                    pending.append(piece)
                    size += len(piece)
                    if size > MAX_BODY:
                        raise ResponseTooLarge(f"a streamed line is too large (more than {MAX_BODY} bytes)")
                    continue
                first, *complete, rest = (b"".join(pending) + piece).split(b"\n")
                pending, size = [rest], len(rest)
                yield from (line for line in (first, *complete) if line.strip())
            last = b"".join(pending)
            if last.strip():
                yield last
        except Exception as e:  # noqa: BLE001 - a read interrupted by close() (or the deadline) ends it quietly
            if self._closed or (self._watchdog is not None and self._watchdog.fired):
                return
            if isinstance(e, _http().HTTPException):  # e.g. IncompleteRead: the server went away mid-body
                raise ConnectionResetError(f"the stream broke: {type(e).__name__}") from None
            raise
        finally:
            self._reading = False
            if self._watchdog is not None:
                self._watchdog.cancel()
            _quietly(self._release)

    def read(self) -> bytes:
        return b"\n".join(self.lines())

    def close(self):
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        _quietly(self._stop)
        if not self._reading:
            _quietly(self._release)


def _quietly(call):
    try:
        call()
    except Exception:  # noqa: BLE001 - already closed
        pass


class _Watchdog:
    """Calls ``stop`` once if not cancelled within ``seconds``; remembers whether it fired."""

    def __init__(self, seconds, stop):
        self.fired = False

        def fire():
            self.fired = True
            try:
                stop()
            except Exception:  # noqa: BLE001 - the socket may be gone already
                pass

        self._cancelled = threading.Event()
        threads.start(lambda: self._cancelled.wait(min(seconds, threading.TIMEOUT_MAX)) or fire(), "deadline")

    def cancel(self):
        self._cancelled.set()


def read_bounded(read, length=None, deadline=None) -> bytes:
    """Read a body with ``read(n)`` until it ends; more than ``MAX_BODY`` bytes raise, and so does a body
    still coming at ``deadline`` (a ``time.monotonic()`` instant: ``read`` then returns what has come,
    as ``read1`` does, so a body trickling forever cannot hold it)."""
    if length is not None and length > MAX_BODY:
        raise ResponseTooLarge(f"the response is too large ({length} bytes; at most {MAX_BODY})")
    parts, total = [], 0
    while True:
        if deadline is not None and time.monotonic() > deadline:
            raise DeadlineExceeded("timed out before the body ended")
        chunk = read(_CHUNK)
        if not chunk:
            if length is not None and total != length:
                raise ConnectionResetError(f"the response ended after {total} of {length} bytes")
            return b"".join(parts)
        total += len(chunk)
        if total > MAX_BODY:
            raise ResponseTooLarge(f"the response is too large (more than {MAX_BODY} bytes)")
        parts.append(chunk)


class HttpTransport:
    """Keep-alive ``http.client`` connections to one API server, safe for concurrent use."""

    def __init__(self, endpoint):
        parts = urlsplit(endpoint.host)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the server must be an http:// or https:// URL")
        parts.port  # noqa: B018 - raises ValueError on a bad port
        self.host = endpoint.host
        self._https = parts.scheme == "https"
        self._address = (parts.hostname, parts.port)
        self._prefix = parts.path.rstrip("/")
        self._authorization = endpoint.authorization
        self._refresh = endpoint.refresh
        self._context = _ssl_context(endpoint) if self._https else None
        self._server_name = endpoint.tls_server_name
        self._idle, self._lock, self._refresh_lock = [], threading.Lock(), threading.Lock()

    def auth_headers(self) -> dict:
        return {"Authorization": self._authorization} if self._authorization else {}

    def refresh(self, rejected=None) -> bool:
        """New credentials from the exec plugin after a 401; True when there are new ones to retry
        with. ``rejected``: the Authorization the server refused. When another request replaced it
        meanwhile, the new one is used without running the plugin again: requests refused at once
        (two reads, 32 evictions) run it once."""
        if self._refresh is None:
            return False
        with self._refresh_lock:
            if rejected is not None and self._authorization != rejected:
                return bool(self._authorization)
            new = self._refresh()
            changed, self._authorization = new != self._authorization, new
            return bool(new) and changed

    def request(self, method, url, headers, body, timeout):
        _check_headers(headers)
        deadline = timeout or DEFAULT_DEADLINE
        end = time.monotonic() + deadline
        path = self._prefix + url[len(self.host):]
        conn, reused = self._connection(timeout)
        watchdog = _Watchdog(deadline, lambda: _shutdown(conn))
        try:
            try:
                status, data, keep = self._exchange(conn, method, path, headers, body, end)
            except (ConnectionError, _http().BadStatusLine) as e:
                if not reused or watchdog.fired or isinstance(e, ResponseTooLarge):
                    raise
                conn.close()  # the server closed the kept-alive connection meanwhile: once more
                conn = self._new(timeout)
                status, data, keep = self._exchange(conn, method, path, headers, body, end)
        except BaseException as e:
            conn.close()
            if watchdog.fired or isinstance(e, DeadlineExceeded):
                raise DeadlineExceeded(f"timed out after {deadline:g}s") from None
            raise e
        finally:
            watchdog.cancel()
        if watchdog.fired:  # the body may look complete only because the socket was shut down
            conn.close()
            raise DeadlineExceeded(f"timed out after {deadline:g}s")
        if keep:
            self._release(conn)
        else:
            conn.close()
        return status, data

    def stream(self, url, headers, timeout):
        """A GET whose body is read as it arrives (a watch), on a connection of its own.

        ``timeout`` bounds connecting, the response's head and every read, and the whole stream:
        the server ends a watch at its ``timeoutSeconds``, so a stream past that is a dead (or a
        hostile) one.
        """
        _check_headers(headers)
        conn, deadline = self._new(timeout), timeout or DEFAULT_DEADLINE
        watchdog = _Watchdog(deadline, lambda: _shutdown(conn))
        try:
            response = _send(conn, "GET", self._prefix + url[len(self.host):], headers, None)
        except BaseException as e:
            conn.close()
            if watchdog.fired:
                raise DeadlineExceeded(f"timed out after {deadline:g}s") from None
            raise e
        finally:
            watchdog.cancel()

        return response.status, Stream(iter(lambda: response.read1(_STREAM_PIECE), b""),
                                       lambda: _shutdown(conn), conn.close, deadline)

    @staticmethod
    def _exchange(conn, method, path, headers, body, end):
        response = _send(conn, method, path, headers, body)
        length = response.getheader("Content-Length")
        data = read_bounded(response.read1, int(length) if length and length.isdigit() else None, end)
        response.read()  # marks a body read to its Content-Length done (read1 does not): the connection is free
        return response.status, data, not response.will_close

    def _connection(self, timeout):
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _dropped(conn):
                    conn.sock.settimeout(timeout or IDLE_TIMEOUT)
                    return conn, True
                conn.close()
        return self._new(timeout), False

    def _new(self, timeout):
        client = _http()
        host, port = self._address
        if self._https:
            conn = _HTTPSConnection(host, port, timeout=timeout or IDLE_TIMEOUT, context=self._context)
            conn.server_name = self._server_name
        else:
            conn = client.HTTPConnection(host, port, timeout=timeout or IDLE_TIMEOUT)
        conn._create_connection = _create_connection
        return conn

    def _release(self, conn):
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()


def _send(conn, method, path, headers, body):
    """Send one request on ``conn`` (headers as given, repeats kept); its response, body unread."""
    conn.putrequest(method, path, skip_accept_encoding=True)
    for name, value in headers:
        conn.putheader(name, value)
    if body is not None:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    return conn.getresponse()


def _check_headers(headers):
    for name, value in headers:
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if any(c in str(name) + text for c in "\r\n\0"):
            raise ValueError(f"invalid header {name}: line breaks are not allowed")


def _http():
    import http.client

    return http.client


def _shutdown(conn):
    if conn.sock is not None:
        conn.sock.shutdown(socket.SHUT_RDWR)


def _dropped(conn) -> bool:
    """The server closed this idle kept-alive connection (readable with nothing to read)."""
    import selectors

    if conn.sock is None:
        return True
    try:  # a selector, not select(): a process may hold file descriptors above FD_SETSIZE
        with selectors.DefaultSelector() as sel:
            sel.register(conn.sock, selectors.EVENT_READ)
            return bool(sel.select(0))
    except (OSError, ValueError):
        return True


def _https_class():
    client = _http()

    class HTTPSConnection(client.HTTPSConnection):
        server_name = None

        def connect(self):
            client.HTTPConnection.connect(self)  # TCP (with the timeout), then TLS with our server name
            self.sock = self._context.wrap_socket(self.sock, server_hostname=_ascii(self.server_name or self.host))

    return HTTPSConnection


def _create_connection(address, *args):
    """``socket.create_connection``, the host given as ``_ascii`` gives it."""
    host, port = address
    return socket.create_connection((_ascii(host), port), *args)


def _ascii(host):
    """An ASCII host name as bytes: the same name to the resolver and to TLS, which encode a str with
    the IDNA codec first (loading it costs a node-scoped command 1.5 ms)."""
    return host.encode("ascii") if isinstance(host, str) and host.isascii() else host


def _HTTPSConnection(*args, **kwargs):  # noqa: N802 - a class made on demand
    global _HTTPS
    if _HTTPS is None:
        _HTTPS = _https_class()
    return _HTTPS(*args, **kwargs)


_HTTPS = None


def _ssl_context(endpoint):
    """Verification as kubectl does it: the kubeconfig's CA (else the system's), its client certificate."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies the certificate and the host name
    if not endpoint.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif endpoint.ca_file or endpoint.ca_data:
        context.load_verify_locations(cafile=endpoint.ca_file, cadata=endpoint.ca_data)  # only this CA
    else:
        context.load_default_certs()  # a public CA: the system's trust store
    if endpoint.cert_file:
        context.load_cert_chain(endpoint.cert_file, endpoint.key_file)
    return context


class ClientTransport:
    """The kubernetes client's urllib3 pool; its auth settings refresh plugin credentials."""

    def __init__(self, api):
        self.host = api.configuration.host
        self._configuration = api.configuration
        self._pool = api.rest_client.pool_manager

    def auth_headers(self) -> dict:
        return {s["key"]: s["value"] for s in self._configuration.auth_settings().values()
                if s.get("in") == "header" and s.get("value")}

    def request(self, method, url, headers, body, timeout):
        """In a helper thread, so the deadline also bounds what urllib3 cannot (headers dripping in)."""
        deadline = timeout or DEFAULT_DEADLINE
        box = []

        def run():
            try:
                box.append((True, self._request(method, url, headers, body, timeout)))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box.append((False, e))

        worker = threads.start(run, "request")
        worker.join(min(deadline, threading.TIMEOUT_MAX))
        if not box:  # still waiting: abandoned (a daemon thread; its socket goes with the process)
            raise DeadlineExceeded(f"timed out after {deadline:g}s")
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def _request(self, method, url, headers, body, timeout):
        from urllib3 import HTTPHeaderDict, Timeout

        header_dict = HTTPHeaderDict()
        for name, value in headers:
            header_dict.add(name, value)
        response = self._pool.request(method, url, headers=header_dict, body=body, retries=False,
                                      timeout=Timeout(connect=timeout or IDLE_TIMEOUT, read=timeout or IDLE_TIMEOUT),
                                      preload_content=False)
        try:
            length = response.headers.get("Content-Length")
            data = read_bounded(response.read, int(length) if length and length.isdigit() else None)
        finally:
            response.release_conn()
        return response.status, data

    def stream(self, url, headers, timeout):
        """A GET read as it arrives (a watch): ``(status, Stream)``; ``timeout`` bounds every read and
        the whole stream."""
        from urllib3 import HTTPHeaderDict, Timeout

        header_dict = HTTPHeaderDict()
        for name, value in headers:
            header_dict.add(name, value)
        response = self._pool.request("GET", url, headers=header_dict, retries=False, preload_content=False,
                                      timeout=Timeout(connect=timeout or IDLE_TIMEOUT, read=timeout or IDLE_TIMEOUT))

        def stop():
            if hasattr(response, "shutdown"):  # wakes a thread blocked reading it (urllib3 >= 2.3)
                response.shutdown()

        return response.status, Stream(response.stream(_STREAM_PIECE, decode_content=True), stop,
                                       response.release_conn, timeout or DEFAULT_DEADLINE)
