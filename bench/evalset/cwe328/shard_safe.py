import hashlib

SHARDS = 16


def shard_for(user_id: str) -> int:
    shard = int(hashlib.md5(user_id.encode()).hexdigest(), 16) % SHARDS
    return shard
