PASSWORD_FIELD = "password"
