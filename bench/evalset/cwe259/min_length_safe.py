password_min_length = "12"
