PASSWORD_RESET_URL = "/accounts/password/reset/"
