def render_condition(template: str, context: dict) -> bool:
    """Evaluates a condition written in a template."""
    return bool(eval(template, {}, context))
