import socket
import ssl

CA_BUNDLE = "/etc/ssl/certs/internal-ca.pem"


def open_directory(host: str, port: int = 636) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=CA_BUNDLE)
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    raw = socket.create_connection((host, port), timeout=10)
    return context.wrap_socket(raw, server_hostname=host)
