"""How HTTP requests reach the API server: two transports with one method.

``HttpTransport`` (kubeconfigs with plain credentials) speaks HTTP/1.1 over the standard
library's ``socket`` and ``ssl``: importing urllib3, or even ``http.client`` (the e-mail
parser comes with it), costs more than a node-scoped command's requests. It sends what the
API server needs and reads what it answers: a status line, headers, and a body sized by
``Content-Length`` or chunked, on kept-alive connections. ``ClientTransport`` uses the
kubernetes client's urllib3 pool, whose configuration refreshes exec and auth-provider
credentials. Both send the headers given (repeats allowed) and return ``(status, body bytes)``;
transport failures raise the underlying exception (``OSError`` and its kin).
"""

import threading
from urllib.parse import urlsplit

MAX_IDLE = 32  # kept-alive connections (the drain executor runs up to 32 requests at once)
MAX_LINE = 65536  # longest status or header line accepted


class ProtocolError(ConnectionError):
    """The server's answer is not HTTP/1.x (e.g. plain HTTP sent to a TLS port)."""


class HttpTransport:
    """Keep-alive HTTP/1.1 connections to one API server, safe for concurrent use."""

    def __init__(self, endpoint):
        parts = urlsplit(endpoint.host)
        self.host = endpoint.host
        self._https = parts.scheme == "https"
        self._address = (parts.hostname, parts.port or (443 if self._https else 80))
        default_port = (self._https and parts.port in (None, 443)) or (not self._https and parts.port in (None, 80))
        self._host_header = parts.netloc if not default_port else parts.hostname
        self._prefix = parts.path.rstrip("/")
        self._authorization = endpoint.authorization
        self._context = _ssl_context(endpoint) if self._https else None
        self._server_name = endpoint.tls_server_name or parts.hostname
        self._idle, self._lock = [], threading.Lock()

    def auth_headers(self) -> dict:
        return {"Authorization": self._authorization} if self._authorization else {}

    def request(self, method, url, headers, body, timeout):
        lines = [f"{method} {self._prefix + url[len(self.host):]} HTTP/1.1", f"Host: {self._host_header}"]
        for name, value in headers:
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise ValueError(f"invalid header {name!r}: line breaks are not allowed")
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        message = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        conn = self._connection(timeout)
        try:
            conn.sock.sendall(message)
            status, keep_alive, data = _read_response(conn.reader, method)
        except BaseException:
            conn.close()
            raise
        if keep_alive:
            self._release(conn)
        else:
            conn.close()
        return status, data

    def _connection(self, timeout):
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.dropped():
                    conn.sock.settimeout(timeout)
                    return conn
                conn.close()
        return _Connection(self._address, timeout, self._context, self._server_name)

    def _release(self, conn):
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def stream(self, url, headers, timeout):
        """A GET whose body is read as it comes (a watch): ``(status, Stream)``, on its own connection."""
        lines = [f"GET {self._prefix + url[len(self.host):]} HTTP/1.1", f"Host: {self._host_header}"]
        lines += [f"{name}: {value}" for name, value in headers if "\r" not in value and "\n" not in value]
        conn = _Connection(self._address, timeout, self._context, self._server_name)
        try:
            conn.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            status, headers_read = _read_head(conn.reader)
        except BaseException:
            conn.close()
            raise
        chunked = "chunked" in headers_read.get("transfer-encoding", "").lower()
        if not chunked and "content-length" in headers_read:  # an error Status: a sized body
            import io

            data = conn.reader.read(int(headers_read["content-length"]))
            conn.close()
            return status, Stream(io.BytesIO(data), lambda: None, False)
        return status, Stream(conn.reader, lambda: _shutdown(conn), chunked)


class _Connection:
    """One TCP (TLS) connection with a buffered reader."""

    def __init__(self, address, timeout, context, server_name):
        import socket

        sock = socket.create_connection(address, timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname=server_name)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self.reader = sock.makefile("rb")

    def dropped(self) -> bool:
        """The server closed this idle kept-alive connection (readable with nothing to read)."""
        import select

        try:
            return bool(select.select([self.sock], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def close(self):
        self.reader.close()
        self.sock.close()


def _read_head(reader):
    """(status, headers) of an HTTP/1.x response; the body is left unread."""
    status, _, headers = _read_status_headers(reader)
    return status, headers


def _read_response(reader, method):
    """(status, keep-alive, body) of one HTTP/1.x response."""
    status, version, headers = _read_status_headers(reader)
    keep_alive = version != b"HTTP/1.0" and headers.get("connection", "").lower() != "close"
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return status, keep_alive, b""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, keep_alive, _read_chunked(reader)
    if "content-length" in headers:
        length = int(headers["content-length"])
        data = reader.read(length)
        if len(data) != length:
            raise ProtocolError(f"the response ended after {len(data)} of {length} bytes")
        return status, keep_alive, data
    return status, False, reader.read()  # delimited by the end of the connection


def _read_status_headers(reader):
    line = reader.readline(MAX_LINE + 1)
    if not line:
        raise ProtocolError("the server closed the connection without answering")
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP response: {line[:40]!r}")
    status = int(parts[1])
    headers = {}
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line or len(line) > MAX_LINE:
            raise ProtocolError("incomplete or oversized response headers")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, parts[0], headers


def _shutdown(conn):
    """Close a streaming connection, waking a thread blocked reading it."""
    import socket

    try:
        conn.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


class Stream:
    """A response body read line by line as it arrives (watch events are one JSON object a line)."""

    def __init__(self, reader, close, chunked):
        self._reader, self._close, self._chunked = reader, close, chunked

    def lines(self):
        """Lines (bytes, without the newline) until the server ends the body."""
        pending = b""
        for piece in (_iter_chunks(self._reader) if self._chunked else iter(lambda: self._reader.readline(), b"")):
            pending += piece
            *complete, pending = pending.split(b"\n")
            yield from (line for line in complete if line.strip())
        if pending.strip():
            yield pending

    def read(self) -> bytes:
        return b"\n".join(self.lines())

    def close(self):
        try:
            self._close()
        except OSError:
            pass


def _iter_chunks(reader):
    while True:
        size_text = reader.readline(MAX_LINE + 1).split(b";", 1)[0].strip()
        if not size_text:
            return
        size = int(size_text, 16)
        if size == 0:
            return
        chunk = reader.read(size)
        reader.readline(MAX_LINE + 1)
        if len(chunk) != size:
            return
        yield chunk


def _read_chunked(reader) -> bytes:
    chunks = []
    while True:
        line = reader.readline(MAX_LINE + 1)
        size_text = line.split(b";", 1)[0].strip()
        if not size_text:
            raise ProtocolError("the chunked response ended early")
        size = int(size_text, 16)
        if size == 0:
            while reader.readline(MAX_LINE + 1) not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return b"".join(chunks)
        chunk = reader.read(size)
        if len(chunk) != size or reader.readline(MAX_LINE + 1) not in (b"\r\n", b"\n"):
            raise ProtocolError("the chunked response ended early")
        chunks.append(chunk)


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
        from urllib3 import HTTPHeaderDict

        header_dict = HTTPHeaderDict()
        for name, value in headers:
            header_dict.add(name, value)
        response = self._pool.request(method, url, headers=header_dict, body=body, timeout=timeout,
                                      preload_content=True, retries=False)
        return response.status, response.data

    def stream(self, url, headers, timeout):
        """A GET read as it arrives (a watch): ``(status, Stream)``."""
        from urllib3 import HTTPHeaderDict

        header_dict = HTTPHeaderDict()
        for name, value in headers:
            header_dict.add(name, value)
        response = self._pool.request("GET", url, headers=header_dict, timeout=timeout,
                                      preload_content=False, retries=False)
        return response.status, _Urllib3Stream(response)


class _Urllib3Stream(Stream):
    def __init__(self, response):
        super().__init__(None, response.release_conn, False)
        self._response = response

    def lines(self):
        pending = b""
        for piece in self._response.stream(4096, decode_content=True):
            pending += piece
            *complete, pending = pending.split(b"\n")
            yield from (line for line in complete if line.strip())
        if pending.strip():
            yield pending

    def close(self):
        try:
            self._response.shutdown() if hasattr(self._response, "shutdown") else self._response.close()
        except Exception:
            pass
        super().close()
