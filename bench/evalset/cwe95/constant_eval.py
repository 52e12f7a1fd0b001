LIMITS = eval("{'cpu': 2, 'memory': 512}")
