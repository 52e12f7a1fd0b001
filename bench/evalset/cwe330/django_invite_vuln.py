import random

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect

from .models import Invitation


@login_required
def invite(request):
    invitation = Invitation(team=request.user.team, email=request.POST["email"])
    invitation.token = "%032x" % random.getrandbits(128)
    invitation.save()
    invitation.send()
    return redirect("team:members")
