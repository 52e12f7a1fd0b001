DB_PASSWORD = "{{ lookup('env', 'DB_PASS') }}"
