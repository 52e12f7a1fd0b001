import smtplib


def send_alert(message, settings):
    with smtplib.SMTP_SSL("smtp.example.com") as smtp:
        smtp.login(user="alerts@example.com", password=settings.smtp_password)
        smtp.sendmail("alerts@example.com", ["ops@example.com"], message)
