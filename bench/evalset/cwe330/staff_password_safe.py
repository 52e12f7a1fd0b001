import secrets
import string

from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.core.management.base import BaseCommand

CHARS = string.ascii_letters + string.digits + "!@#$%^&*"


class Command(BaseCommand):
    help = "Creates accounts for new staff and mails them a first password."

    def add_arguments(self, parser):
        parser.add_argument("emails", nargs="+")

    def handle(self, *args, **options):
        for email in options["emails"]:
            password = "".join(secrets.choice(CHARS) for _ in range(14))
            get_user_model().objects.create_user(username=email, email=email, password=password)
            send_mail("Your account", f"Your first password: {password}", None, [email])
