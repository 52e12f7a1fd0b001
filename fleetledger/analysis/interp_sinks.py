"""What reaches the library models' sinks at a call: flows of outside data, parameter hits
that become a summary's sinks, and each sink's evidence (tainted, sanitised, constant, of unknown
origin); template files a render writes unescaped; API misuse checks; and the models'
conditions (``when``, ``unless``) these depend on. Part of the abstract interpreter
(``interp.Frame``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from . import argv, backtracking, fetchers, reprs, set_after
from .facts import Evidence, Flow, Misuse, Site, SinkHit
from .library_methods import library_types as library_object_types
from .model_conventions import UNREAD_TEMPLATE, Render, ReturnSink
from .model_records import UNTYPED, Check, Condition, Sink
from .texts import holds_text, known_texts
from .values import EMPTY, NOT_CONSTANT, Label, Value, constant, join, of_labels

# An HTML start or end tag: an element of the WHATWG HTML standard (with SVG's and MathML's
# roots) or a custom element (its name holds a hyphen), so "<name>" in plain text is no tag.
_ELEMENTS = ("a|abbr|address|area|article|aside|audio|b|base|bdi|bdo|blockquote|body|br|button|canvas|caption|cite|"
             "code|col|colgroup|data|datalist|dd|del|details|dfn|dialog|div|dl|dt|em|embed|fieldset|figcaption|figure|"
             "footer|form|h[1-6]|head|header|hgroup|hr|html|i|iframe|img|input|ins|kbd|label|legend|li|link|main|map|"
             "mark|menu|meta|meter|nav|noscript|object|ol|optgroup|option|output|p|picture|pre|progress|q|rp|rt|ruby|"
             "s|samp|script|search|section|select|slot|small|source|span|strong|style|sub|summary|sup|table|tbody|td|"
             "template|textarea|tfoot|th|thead|time|title|tr|track|u|ul|var|video|wbr|svg|math")
_MARKUP = re.compile(rf"</?(?:(?:{_ELEMENTS})|[a-z][a-z0-9]*-[a-z0-9-]*)(?:[\s/>]|$)", re.IGNORECASE)

if TYPE_CHECKING:
    from .definitions import FunctionInfo
    from .program import Program


class Sinks:
    """Sink, template and misuse checks, mixed into ``interp.Frame``."""

    def check_template(self, render: Render, args: list[Value], kwargs: dict[str, Value], site: Site,
                       node: ast.AST | None = None) -> None:
        """A template file of the repository that writes a context variable unescaped (``|safe``,
        ``{% autoescape off %}``) is an HTML sink for the value the call passes under that name.
        Where the template cannot be read (its name is not a constant, or no file of the
        repository has it), HTML markup the call passes is one (``markup_in_context``)."""
        named = args[render.template_arg] if render.template_arg < len(args) else kwargs.get(render.template_keyword)
        if named is not None and named.types - {"str"} and not named.is_const:
            return  # an object at the template's place (another signature's request): not this entry
        if named is not None and not named.is_const and isinstance(node, ast.Call):
            named = self.class_default(node, render) or named
        found = self.program.find_template(named.const) if (
            named is not None and named.is_const and isinstance(named.const, str)) else None
        if render.context_kwargs:
            context = Value(items={k: v for k, v in kwargs.items() if k != render.template_keyword})
        elif 0 <= render.context_arg < len(args):
            context = args[render.context_arg]
        else:
            context = kwargs.get(render.context_keyword, EMPTY)
        if found is None:
            self.markup_in_context(render, context, site)
            return
        path, places = found
        for place in places:
            value = context.get(place.variable) if context.items is not None else context.flatten()
            if value is None:
                continue
            sink = Sink(target=render.target, is_method=False, kind="xss", args=(0,), model="templates",
                        what=f"the template variable {place.variable}, written unescaped ({place.how}) at {path}:{place.line}")
            self.sink_value(sink, site, value, f"template variable {place.variable}")

    def class_default(self, node: ast.Call, render: Render) -> Value | None:
        """The constant a method's class body gives the attribute its instance passes as the
        template's name (``render(request, self.template_name, ...)`` in a class-based view
        whose class says ``template_name = "blog/search.html"``), or None."""
        function = self.function
        written = node.args[render.template_arg] if render.template_arg < len(node.args) else next(
            (k.value for k in node.keywords if k.arg == render.template_keyword), None)
        if function is None or not function.bound or function.cls is None or not isinstance(written, ast.Attribute) \
                or not isinstance(written.value, ast.Name) or written.value.id != function.params[0].arg:
            return None
        for base in self.program.class_mro(function.cls.id):
            info = self.program.classes.get(base)
            if info is not None and written.attr in info.attributes:
                found = info.attributes[written.attr]
                return found if found.is_const and isinstance(found.const, str) else None
        return None

    def markup_in_context(self, render: Render, context: Value, site: Site) -> None:
        """HTML markup built from data and handed to a template the scan cannot read
        (``context["link"] = '<a href="%s">' % q``) is an HTML sink: code builds markup for a
        template only to have it written as markup (``|safe``, ``mark_safe``); escaped, the page
        would show the tags. Reported as uncertain (``verdicts.from_trace``), the template
        being unseen."""
        values = [(str(k), v) for k, v in context.items.items() if isinstance(k, str)] if context.items is not None else []
        for name, value in values:
            if not any(_MARKUP.search(text) for text in known_texts(value)):
                continue
            sink = Sink(target=render.target, is_method=False, kind="xss", args=(0,), model=UNREAD_TEMPLATE,
                        what=f"the template variable {name}, HTML markup given to a template the scan cannot read")
            self.sink_value(sink, site, value, f"template variable {name}")

    def holds(self, condition: Condition, args: list[Value], kwargs: dict[str, Value], *,
              any_of: bool = False) -> bool | None:
        """Tells whether a model's condition holds for a call: True, False, or None (unknown).
        All its keywords must match, or with ``any_of`` one of them (an ``unless`` listing
        alternatives: ``mimetype`` or ``content_type``)."""
        if any_of and len(condition.keywords) > 1:
            parts = [self.holds(Condition(keywords={k: v}, defaults=condition.defaults, positions=condition.positions),
                                args, kwargs) for k, v in condition.keywords.items()]
            return True if True in parts else None if None in parts else False
        unknown = False
        for keyword, wanted in condition.keywords.items():
            value = kwargs.get(keyword)
            if value is None and keyword in condition.positions and condition.positions[keyword] < len(args):
                value = args[condition.positions[keyword]]
            if value is None:
                if condition.defaults.get(keyword, None) != wanted:
                    return False
                continue
            if isinstance(wanted, dict):
                matched = _text_test(value, wanted) if "endswith" in wanted or "has_text" in wanted else \
                    _container_test(value, wanted)
                if matched is False:
                    return False
                unknown = unknown or matched is None
                continue
            known = _comparable(value)
            if known is NOT_CONSTANT and isinstance(wanted, list) and self._derives_from(value, wanted):
                continue  # a class of the analysed code derived from one named (a ``SafeLoader``'s subclass)
            if known is NOT_CONSTANT:
                library_types = library_object_types(value.types)
                if isinstance(wanted, list) and library_types and (not value.labels or library_types <= set(wanted)):
                    # An object of library types compares as its types: ``parser`` is a
                    # reader told to resolve external entities, or it is not. Outside data
                    # it holds (an uploaded file's content) leaves it of those types.
                    if not library_types & set(wanted):
                        return False
                    continue
                unknown = True
                continue
            if isinstance(wanted, list):
                if known not in wanted:
                    return False
            elif isinstance(wanted, bool):
                if bool(known) != wanted:
                    return False
            elif known != wanted:
                return False
        return None if unknown else True

    def applies(self, sink: Sink, args: list[Value], kwargs: dict[str, Value]) -> bool:
        """Whether a sink's conditions allow it for a call's arguments: its ``when`` may hold,
        none of its ``absent`` keywords is passed, and its ``unless`` does not surely hold."""
        if sink.when is not None and self.holds(sink.when, args, kwargs) is False:
            return False
        if any(k in kwargs or (k in sink.positions and sink.positions[k] < len(args)) for k in sink.absent):
            return False
        return not (sink.unless is not None and self.holds(sink.unless, args, kwargs, any_of=True) is True)

    def _set_safe(self, sink: Sink, node: ast.Call) -> bool:
        """Whether a constant the sink's ``unless`` names safe is assigned to the object the
        call made, right after it (``Sink.unless_set``, ``set_after``)."""
        if not sink.unless_set or sink.unless is None:
            return False
        scope = self.function.node if self.function is not None else self.module.tree
        found = set_after.attribute_set(scope, node, sink.unless.keywords)
        if found is None:
            return False
        attribute, assigned = found
        safe = Condition(keywords={attribute: sink.unless.keywords[attribute]})
        return self.holds(safe, [], {attribute: constant(assigned)}) is True

    def check_sink(self, sink: Sink, receiver: Value | None, args: list[Value], kwargs: dict[str, Value],
                   star: list[Value], node: ast.Call, site: Site) -> None:
        if not self.applies(sink, args, kwargs) or self._set_safe(sink, node):
            if sink.unless is not None and (self.holds(sink.unless, args, kwargs, any_of=True) is True
                                            or self._set_safe(sink, node)):
                # What the model names safe was passed (``Loader=yaml.SafeLoader`` or a subclass
                # of it): another detector's candidate here is judged by that.
                self._evidence(Evidence(kind=sink.kind, site=site, state="sanitised",
                                        detail=f"passed with the {' or '.join(sink.unless.keywords)} the model of "
                                               f"{sink.target}() names safe", sanitisers=(f"{sink.target}() made safe",)))
            return
        if sink.slow_pattern is not None:
            shape = _slow_shape(sink, receiver, args, kwargs)
            if shape is None:
                return
            sink = replace(sink, what=f"{sink.what}: {shape!r}")
        dangerous: list[tuple[Value, str]] = []
        if sink.receiver and receiver is not None:
            dangerous.append((receiver, "the receiver"))
        for position in sink.args:
            if position == -1:  # every argument; a log record's ``%r`` fields write their value's repr
                written = reprs.logged(args) if sink.kind in reprs.REPR_KINDS else args
                dangerous.extend((v, f"argument {i + 1}") for i, v in enumerate(written))
            elif position < len(args):
                dangerous.append((args[position], f"argument {position + 1}"))
        for keyword in sink.keywords:
            if keyword in kwargs:
                dangerous.append((kwargs[keyword], f"keyword {keyword}"))
        # Unpacked arguments (*a, **kw) may fill the sink's positions, unless the call already
        # passes each of them explicitly and the sink names no keyword (format_html(text, **kw):
        # kw fills the placeholders, never the text, which would be a TypeError).
        passed = (bool(sink.args) and all(0 <= p < len(args) for p in sink.args) and not sink.keywords
                  and not any(isinstance(a, ast.Starred) for a in node.args))  # after a *a, positions are unknown
        if star and (sink.args or sink.keywords) and not passed and not sink.target.startswith(UNTYPED + "."):
            # A method matched by its name alone on a receiver of unknown type is a sink only
            # where the call shows the argument: unpacked arguments forward whatever came in.
            dangerous.extend((v, "unpacked arguments") for v in star)
        if sink.argv_from >= 0 and dangerous:
            vector = argv.started_vector(dangerous[0][0], args, sink.argv_from)
            self.option_sink(sink, site, vector, dangerous[0][1])
            self.fetch_sink(sink, site, vector, dangerous[0][1])
            dangerous = [(argv.program_part(vector), dangerous[0][1])]
        elif sink.operands_from >= 0 and dangerous:
            vector = argv.listed_vector(dangerous[0][0], args[sink.operands_from:], star)
            self.option_sink(sink, site, vector, dangerous[0][1])
            self.fetch_sink(sink, site, vector, dangerous[0][1])
            dangerous = [(argv.program_part(vector), dangerous[0][1])]
        for value, role in dangerous:
            if sink.texts_only and library_object_types(value.types):
                continue  # an open file or stream passed where the call also takes a path
            if sink.program:
                self.option_sink(sink, site, value, role)
                self.fetch_sink(sink, site, value, role)
                value = argv.program_part(value)
            elif sink.kind == "command":  # a shell command line
                self.fetch_sink(sink, site, value, role)
            elif sink.element is not None and value.items is not None and sink.element in value.items:
                value = value.get(sink.element) or value
            self.sink_value(sink, site, value, role)

    def sink_returns(self) -> None:
        """For a method that a ``[[return_sink]]`` model names (Django's ``as_sql()`` of a
        subclass of ``Func``): each value it returns (or the item the model names) is that
        model's sink, at its ``return``."""
        function = self.function
        if function is None or not self.returns_at:
            return
        for model in return_sinks(self.program, function):
            sink = Sink(target=f"{function.qualname}()", is_method=True, kind=model.kind, args=(0,), what=model.what,
                        model=model.model)
            for value, statement in self.returns_at:
                part = value.get(model.element) if model.element is not None else None
                self.sink_value(sink, self.site(statement.value or statement), part if part is not None else value,
                                "the returned value")

    def option_sink(self, sink: Sink, site: Site, vector: Value, role: str) -> None:
        """Reports the items of a started program's vector that it may read as options
        (``argv.option_part``) as an argument-injection sink (CWE-88) of the same call."""
        options, name = argv.option_part(vector)
        if options is not EMPTY:
            self.sink_value(replace(sink, kind="argument", program=False,
                                    what=f"an argument {name} may read as an option ({sink.what})"), site, options, role)

    def fetch_sink(self, sink: Sink, site: Site, command: Value, role: str) -> None:
        """Reports the operands that a started program in ``fetchers.FETCHERS`` (curl, wget)
        fetches as URLs (``fetchers.fetched_part``) as a request-forgery sink (CWE-918) of the same
        call: outside data there chooses the host the request goes to, unless a constant
        ``scheme://host/`` before it fixes that."""
        urls, name = fetchers.fetched_part(command)
        if urls is not EMPTY:
            self.sink_value(replace(sink, kind="ssrf", program=False, host_fixed="partial",
                                    what=f"a URL {name} fetches ({sink.what})"), site, urls, role)

    def sinks_for_method(self, owner: Value, method: str, args: list[Value], kwargs: dict[str, Value],
                         node: ast.AST) -> None:
        """Checks the sinks of an implicit method call (an item or attribute store)."""
        site = self.site(node)
        for key in self.method_keys(owner, method):
            for sink in self.catalog.sinks.get(key, ()):
                if not self.applies(sink, args, kwargs):  # an item store's key, as a call's argument
                    continue
                for position in sink.args:
                    if position < len(args):
                        self.sink_value(sink, site, args[position], f"argument {position + 1}")

    def sink_value(self, sink: Sink, site: Site, value: Value, role: str) -> None:
        """Reports what reaches a sink: flows of outside data, parameter hits for the summary,
        and the sink's evidence."""
        kind = self.catalog.kinds[sink.kind]
        labels = value.all_labels()
        partial = False
        if sink.host_fixed and value.prefix is not None and _host_fixed(value.prefix):
            if sink.host_fixed == "safe":
                self._evidence(Evidence(kind=sink.kind, site=site, state="sanitised",
                                        detail=f"the value starts with the constant {value.prefix[:60]!r}, which fixes where it points",
                                        sanitisers=("a constant prefix that fixes the host",)))
                return
            partial = True
        state, detail, sanitisers = "constant", "built only from constants", []
        params: list[Label] = []
        for label in labels:
            if kind.checks_make_safe and label.safe_for(sink.kind, sink.needs_file):
                sanitisers.extend(s for s in label.sanitisers if s not in sanitisers)
                if state == "constant":
                    state, detail = "sanitised", f"sanitised or checked by {', '.join(label.sanitisers) or 'a check'}"
                continue
            if label.channel == "param":
                params.append(label)
                continue
            if label.channel == "opaque":
                if state in ("constant", "sanitised"):
                    state, detail = "unknown", f"it contains {label.what}, line {label.line}"
                continue
            if label.channel in kind.channels and (not sink.channels or label.channel in sink.channels):
                if self.own:
                    self.program.report(Flow(kind=sink.kind, sink=sink, site=site, label=label, role=role, partial=partial))
                state, detail = "tainted", f"it contains {label.what}, line {label.line}"
            elif state in ("constant", "sanitised"):
                state, detail = "unknown", f"it contains {label.what}, line {label.line}"
        refs = sorted(t[1:] for t in value.types if t.startswith("=")) if not value.is_const else []
        if refs and state in ("constant", "sanitised"):
            state, detail = "unknown", f"it is {refs[0]}, a name whose value the analysis does not see"
        if params:
            key = (site.line, site.col, sink.kind, role)
            old = self.hits.get(key)
            hit_value = of_labels(params)
            self.hits[key] = SinkHit(sink=sink, site=site, value=join(old.value, hit_value) if old else hit_value, role=role)
            if state != "tainted":
                first = params[0]
                state, detail = ("unknown", f"it contains {first.what}.{'.'.join(first.access)} (the object's state)") if (
                    self.function is not None and self.function.bound and first.param == 0) else (
                    "parameter", f"it contains {first.what}")
        self._evidence(Evidence(kind=sink.kind, site=site, state=state, detail=detail, sanitisers=tuple(sanitisers)))

    def _derives_from(self, value: Value, wanted: list[Any]) -> bool:
        """True when ``value`` is one or more classes of the analysed code, each derived from a
        library class in ``wanted``: what a model says of a class it says of its subclasses."""
        classes = [f for f in value.functions if f in self.program.classes]
        return bool(classes) and len(classes) == len(value.functions) and not value.labels and all(
            any(base in wanted for base in self.program.class_mro(c)[1:]) for c in classes)

    def _evidence(self, evidence: Evidence) -> None:
        if self.own:  # (``Frame.own``)
            self.program.record_evidence(evidence)

    def check_misuse(self, check: Check, args: list[Value], kwargs: dict[str, Value], node: ast.Call, site: Site) -> None:
        if check.untracked and self.follows_receiver(node):
            return
        unpacked = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if len(node.args) + len(node.keywords) < check.min_args and not unpacked:  # *a or **kw may hold any number
            return
        if check.unless is not None and self.holds(check.unless, args, kwargs, any_of=True) is True:
            return
        if check.when is not None and self.holds(check.when, args, kwargs) is not True:
            return
        message = check.message
        if check.backtracks >= 0 or check.backtracks_keyword:
            pattern = args[check.backtracks] if 0 <= check.backtracks < len(args) else kwargs.get(check.backtracks_keyword)
            flags = args[check.backtracks_flags] if 0 <= check.backtracks_flags < len(args) else kwargs.get("flags")
            known = flags.const if flags is not None and flags.is_const and isinstance(flags.const, int) else 0
            texts = constant_texts(pattern)
            written = (node.args[check.backtracks] if 0 <= check.backtracks < len(node.args) else
                       next((k.value for k in node.keywords if k.arg and k.arg == check.backtracks_keyword), None))
            if not texts and written is not None:  # a helper's result for a constant (``tobytes(PATTERN)``)
                texts = constant_texts(self.program.folded(self, written))
            shape = next((found for text in texts
                          if (found := backtracking.exponential(text, check.whole_match, known)) is not None), None)
            if shape is None:
                return
            message = f"{message}: {shape!r}"
        if check.literal_arg >= 0 or check.literal_keyword:
            secret = args[check.literal_arg] if 0 <= check.literal_arg < len(args) else kwargs.get(check.literal_keyword)
            if secret is None or not (secret.is_const and isinstance(secret.const, (str, bytes)) and secret.const):
                return
        if check.arg_in:
            value = args[check.arg] if check.arg < len(args) else None
            known = _comparable(value) if value is not None else NOT_CONSTANT
            if known is NOT_CONSTANT or str(known).lower() not in check.arg_in:
                return
        for keyword, wanted in check.required.items():
            value = kwargs.get(keyword)
            if value is None and keyword in check.positions and check.positions[keyword] < len(args):
                value = args[check.positions[keyword]]
            known = _comparable(value) if value is not None else None
            if (value is not None and known is NOT_CONSTANT) or (value is None and unpacked):
                return  # not known, or maybe passed in *args or **kwargs
            if value is not None and (known in wanted if isinstance(wanted, list) else
                                      bool(known) == wanted if isinstance(wanted, bool) else known == wanted):
                continue
            shown = "not passed" if value is None else f"{known!r}"
            if self.own:  # (``Frame.own``)
                self.program.report_misuse(Misuse(kind=check.kind, cwe=check.cwe, title=check.title, site=site,
                                                  message=f"{check.message} ({keyword} is {shown})"))
            return
        if not check.required and self.own:
            self.program.report_misuse(Misuse(kind=check.kind, cwe=check.cwe, title=check.title, site=site,
                                              message=message))


def _container_test(value: Value, test: dict[str, Any]) -> bool | None:
    """A condition's ``{ contains = [...] }`` (a list or tuple holding one of these constants)
    or ``{ has = { key = constant } }`` (a dict holding each key with that value) on an
    argument the engine knows item by item: True, False, or None (not known)."""
    items = value.items
    if items is None or value.labels:
        return None
    if "contains" in test:
        found = [_comparable(item) for item in items.values()]
        if any(known is not NOT_CONSTANT and known in test["contains"] for known in found):
            return True
        return None if NOT_CONSTANT in found else False
    for key, wanted in test["has"].items():
        item = items.get(key)
        if item is None:
            return False
        known = _comparable(item)
        if known is NOT_CONSTANT:
            return None
        if (bool(known) != wanted) if isinstance(wanted, bool) else known != wanted:
            return False
    return True


def _text_test(value: Value, test: dict[str, Any]) -> bool | None:
    """A condition's ``{ endswith = [...] }`` (every string the argument can be ends with one
    of these texts: its constant, or the constant suffix every value of it ends with) and ``{
    has_text = [...] }`` (every string it can be holds one of them: its constant, or the texts
    the engine knows it holds), each alone or both: True, False, or None (not known)."""
    if "has_text" in test:
        if not any(holds_text(value, text) for text in test["has_text"]):
            return False if value.is_const and isinstance(value.const, str) else None
        if "endswith" not in test:
            return True
    ends = test["endswith"]
    known = value.const if value.is_const and isinstance(value.const, str) else value.suffix
    if known is None:
        return None
    if any(known.endswith(text) for text in ends):
        return True
    # A suffix that a longer text ends with may be the end of a value that ends with that text.
    return False if value.is_const or not any(text.endswith(known) for text in ends) else None


def _comparable(value: Value) -> Any:
    """A value as a condition compares it: its constant, or the qualified name of the one
    library object it stands for (``yaml.SafeLoader``); else ``NOT_CONSTANT``."""
    if value.is_const:
        return value.const
    refs = [t[1:] for t in value.types if t.startswith("=")]
    return refs[0] if len(refs) == 1 and not value.labels else NOT_CONSTANT


def _host_fixed(prefix: str) -> bool:
    """True when a URL prefix fixes the scheme and host (``https://h/``) or is a path on this
    site (``/x``, not ``//`` or ``/\\``)."""
    if "://" in prefix:
        rest = prefix.split("://", 1)[1]
        return "/" in rest or "?" in rest or "#" in rest
    return len(prefix) >= 2 and prefix[0] == "/" and prefix[1] not in "/\\"


def _slow_shape(sink: Sink, receiver: Value | None, args: list[Value], kwargs: dict[str, Value]) -> str | None:
    """The pattern a regular expression sink matches with, when it is a constant whose matching
    can take polynomial time (``backtracking.polynomial``), else None."""
    if sink.slow_pattern == -1:  # the compiled pattern's own text, whatever else it may hold
        pattern = (receiver.items or {}).get(".pattern") if receiver is not None else None
        flags = (receiver.items or {}).get(".flags") if receiver is not None else None
    else:
        position = sink.slow_pattern if sink.slow_pattern is not None else 0
        pattern = args[position] if position < len(args) else kwargs.get("pattern")
        flags = args[sink.slow_flags] if 0 <= sink.slow_flags < len(args) else kwargs.get("flags")
    known = flags.const if flags is not None and flags.is_const else 0
    for text in constant_texts(pattern):
        shape = backtracking.polynomial(text, flags=known if isinstance(known, int) else 0,
                                        anywhere=sink.matches == "anywhere", whole_match=sink.matches == "whole")
        if shape is not None:
            return shape
    return None


def constant_texts(value: Value | None) -> list[str | bytes]:
    """The texts a value is: its constant, or each of the few constants it is one of
    (``re_words if words else re_chars``); none when it is not known to be a text."""
    if value is None:
        return []
    found = [value.const] if value.is_const else sorted(value.choices, key=repr)
    return [text for text in found if isinstance(text, (str, bytes))]


def return_sinks(program: Program, function: FunctionInfo) -> list[ReturnSink]:
    """The ``[[return_sink]]`` models that make what ``function`` returns a sink: it is a
    method they name, of a class with one of their bases."""
    if function.cls is None:
        return []
    models = [m for m in program.catalog.return_sinks if function.name in m.methods]
    if not models:
        return []
    mro = set(program.class_mro(function.cls.id))
    return [m for m in models if not mro.isdisjoint(m.bases)]
