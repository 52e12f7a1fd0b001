import http.client
import ssl


def probe(host: str) -> int:
    context = ssl._create_unverified_context()
    connection = http.client.HTTPSConnection(host, context=context)
    connection.request("HEAD", "/")
    return connection.getresponse().status
