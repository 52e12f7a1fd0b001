"""Where a template's escaping does not hold a variable (``analysis/templates.py``): the
explicit ways out (``safe``, autoescape blocks) and the places HTML escaping does not protect
(script code, event-handler attributes)."""

from __future__ import annotations

import pytest

from fleetledger.analysis.templates import EVENT_HANDLER, SCRIPT_CODE, unescaped


def places(text: str) -> dict[str, str]:
    return {u.variable: u.how for u in unescaped(text)}


@pytest.mark.parametrize("script, unsafe", [
    ("var n = {{ x }};", True),
    ('var s = "{{ x }}";', False),
    ("var s = '{{ x }}';", False),
    ("var s = `${ {{ x }} }`;", True),  # backticks and ${ are not HTML-escaped
    ("// {{ x }}", True),  # a newline in x ends the comment
    ("/* {{ x }} */", True),
    ('var s = "a\\"b"; f({{ x }});', True),  # an escaped quote does not end the literal
    ('var s = "{{ y }}" + {{ x }};', True),
    ("var j = {{ x|tojson }};", False),
    ("var j = '{{ x|escapejs }}' + {{ x|length }};", False),
    ("var n = {{ x|escape }};", True),  # HTML escaping only
])
def test_a_variable_in_script_code_is_unescaped_unless_a_quoted_literal_holds_it(script: str, unsafe: bool) -> None:
    found = places(f"<p>{{{{ x }}}}</p>\n<script>\n{script}\n</script>\n<p>{{{{ x }}}}</p>")
    assert found == ({"x": SCRIPT_CODE} if unsafe else {})
    assert [u.line for u in unescaped(f"<script>\n{script}\n</script>")] == ([2] if unsafe else [])


@pytest.mark.parametrize("opening, unsafe", [
    ("<script>", True), ('<script type="text/javascript">', True), ("<SCRIPT type=module>", True),
    ('<script type="application/json">', False), ('<script type="text/x-template">', False),
])
def test_only_scripts_of_a_javascript_type_run_as_code(opening: str, unsafe: bool) -> None:
    assert places(f"{opening}{{{{ x }}}}</script>") == ({"x": SCRIPT_CODE} if unsafe else {})


def test_an_event_handler_attribute_is_unescaped_even_inside_its_quotes() -> None:
    found = places("""<button onclick="go('{{ a }}')" title="{{ b }}" onmouseover='{{ c }}'>{{ d }}</button>
                      <img src=x onerror={{ e }}> <a href="/{{ f }}">x</a>""")
    assert found == {"a": EVENT_HANDLER, "c": EVENT_HANDLER, "e": EVENT_HANDLER}


def test_autoescape_blocks_nest() -> None:
    """Regression: an ``{% autoescape on %}`` block inside an ``off`` one was read as off, and its
    ``endautoescape`` ended the outer ``off`` block."""
    found = unescaped("{% autoescape off %}{{ a }}{% autoescape on %}{{ b }}{% endautoescape %}{{ c }}"
                      "{% endautoescape %}{{ d }}")
    assert [u.variable for u in found] == ["a", "c"]


def test_a_script_without_its_end_tag_and_unclosed_tags_stay_linear() -> None:
    text = "<script>" + "{{ x }} '" * 20_000 + "{{ y"
    assert {u.variable for u in unescaped(text)} == {"x"}


def test_many_handlers_and_variables_cost_linear_time() -> None:
    """Regression: a hostile template of 1 MB with 40,000 variables took 15 s (each variable's
    line was counted from the start of the text); it is read in one pass, and each variable finds
    its event-handler attribute by bisection."""
    text = '<b onclick="{{ x }}">' * 40_000
    found = unescaped(text)
    assert len(found) == 40_000 and {u.how for u in found} == {EVENT_HANDLER}
