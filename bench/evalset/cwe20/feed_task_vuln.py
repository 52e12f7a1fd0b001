import xml.etree.ElementTree as ET

import requests
from celery import shared_task

from .models import Entry, Feed


@shared_task
def refresh_feed(feed_id):
    feed = Feed.objects.get(pk=feed_id)
    response = requests.get(feed.url, timeout=10)
    response.raise_for_status()
    channel = ET.fromstring(response.content).find("channel")
    for item in channel.iterfind("item"):
        Entry.objects.get_or_create(feed=feed, link=item.findtext("link"), defaults={"title": item.findtext("title")})
