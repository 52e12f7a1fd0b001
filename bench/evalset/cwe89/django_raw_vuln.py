from django.contrib.auth.models import User
from django.http import JsonResponse


def search(request):
    username = request.GET["q"]
    users = User.objects.raw("SELECT * FROM auth_user WHERE username = '%s'" % username)
    return JsonResponse({"ids": [u.id for u in users]})
