import smtplib


def send_alert(message):
    with smtplib.SMTP_SSL("smtp.example.com") as smtp:
        smtp.login(user="alerts@example.com", password="mail-Pa55-2024")
        smtp.sendmail("alerts@example.com", ["ops@example.com"], message)
