"""Local web servers for unit tests: a handler class served on a loopback port, and self-signed certificates."""

import http.server
import threading
from datetime import datetime, timedelta, timezone


def serve(handler, tls=None, *, poll_interval=0.5, daemon_threads=False, **attributes):
    """Serve ``handler`` on 127.0.0.1 in a daemon thread: (server, its URL). ``tls`` (an ``ssl.SSLContext``) makes it
    HTTPS; ``attributes`` are set on the server before it starts (its handlers read them as ``self.server.NAME``).
    The caller shuts it down."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = daemon_threads
    for name, value in attributes.items():
        setattr(server, name, value)
    scheme = "http"
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True).start()
    return server, f"{scheme}://127.0.0.1:{server.server_address[1]}"


def self_signed(tmp_dir, names):
    """(cert PEM path, key PEM path, cert PEM bytes) for a self-signed EC certificate."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.now(timezone.utc)
    sans = [x509.IPAddress(ipaddress.ip_address(n)) if n[0].isdigit() else x509.DNSName(n) for n in names]
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_path, key_path = tmp_dir / f"{names[0]}.crt", tmp_dir / f"{names[0]}.key"
    cert_path.write_bytes(pem)
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path, pem
