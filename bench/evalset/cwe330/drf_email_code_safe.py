import secrets

from rest_framework.decorators import api_view
from rest_framework.response import Response

from .models import EmailVerification


@api_view(["POST"])
def request_verification(request):
    code = f"{secrets.randbelow(10**6):06d}"
    EmailVerification.objects.create(user=request.user, code=code)
    request.user.email_user("Verify your address", f"Your verification code: {code}")
    return Response(status=202)
