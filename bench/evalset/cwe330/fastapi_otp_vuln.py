from random import randint

from fastapi import APIRouter, Depends

from .deps import current_user
from .sms import send_sms
from .store import remember_otp

router = APIRouter()


@router.post("/2fa/sms")
async def send_login_code(user=Depends(current_user)):
    otp = randint(0, 999999)
    await remember_otp(user.id, otp, ttl=300)
    await send_sms(user.phone, f"Your login code is {otp:06d}")
    return {"sent": True}
