# Engine probe: TLS certificate checks turned off through cert_reqs (urllib3, ssl), and unsigned JWTs.
import ssl
import urllib3
import urllib3 as ur3
from urllib3 import PoolManager

a = PoolManager(10, cert_reqs=ssl.CERT_NONE)  # $ tls-unverified
b = ur3.connection_from_url("https://x", cert_reqs="NONE")  # $ tls-unverified
c = ur3.connection_from_url("https://x", cert_reqs="CERT_REQUIRED")  # ok tls-unverified
d = urllib3.ProxyManager("http://proxy", cert_reqs=ssl.CERT_OPTIONAL)  # $ tls-unverified
e = PoolManager(10)  # ok tls-unverified
f = ssl.wrap_socket(None, None, None, False, ssl.CERT_NONE)  # $ tls-unverified

import jwt  # noqa: E402

unsigned = jwt.encode({"user": "a"}, None, algorithm="none")  # $ jwt-unsigned
signed = jwt.encode({"user": "a"}, "key-from-settings", algorithm="HS256")  # ok jwt-unsigned, $ hardcoded-key (the key is a literal)
