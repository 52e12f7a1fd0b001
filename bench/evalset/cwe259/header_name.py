TOKEN_HEADER = "X-Auth-Token"
