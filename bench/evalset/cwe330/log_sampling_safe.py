import logging
import random

from django.conf import settings

logger = logging.getLogger("slow_requests")


class SlowRequestSampler:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if random.random() < settings.SLOW_REQUEST_SAMPLE_RATE:
            logger.info("%s %s took %sms", request.method, request.path, response.get("Server-Timing", "?"))
        return response
