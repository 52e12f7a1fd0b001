from django.utils.safestring import SafeData, mark_safe


def stringfilter(func):
    def wrapper(first, *args, **kwargs):
        first = str(first)
        result = func(first, *args, **kwargs)
        if isinstance(first, SafeData) and getattr(func, "is_safe", False):
            result = mark_safe(result)
        return result

    return wrapper
