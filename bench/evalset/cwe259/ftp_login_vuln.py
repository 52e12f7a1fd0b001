from ftplib import FTP_TLS


def upload(path):
    ftp = FTP_TLS("ftp.example.com")
    ftp.login(user="backup", passwd="Tr0ub4dor&3")
    with open(path, "rb") as handle:
        ftp.storbinary("STOR latest.tgz", handle)
