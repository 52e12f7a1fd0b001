import operator

OPERATORS = {"eq": operator.eq, "lt": operator.lt, "gt": operator.gt}


def render_condition(template: str, context: dict) -> bool:
    """Evaluates a condition written in a template."""
    name, op, value = template.split()
    return OPERATORS[op](context[name], value)
