import logging

log = logging.getLogger(__name__)


def retry_failed(item_id):
    log.warning("delete from queue failed for item %s, retrying" % item_id)
