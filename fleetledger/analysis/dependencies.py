"""What an analysis depended on: the files it read and how the names it looked up resolved.

An analysis of one file may read other files of the repository (the modules it imports, the
templates its views render) and may look up names that resolve to no file of the repository.
Its result stays valid as long as every file it read has the same content and every lookup
resolves the same way; that is what makes a recorded result reusable for an unchanged file in a
later scan (a *verifying trace*, as in build systems: Mokhov, Mitchell and Peyton Jones,
"Build systems à la carte", ICFP 2018, section 4.2).

The engine shares work between the analyses of one process (imported modules, function
summaries). Each shared piece carries its own ``Dependencies``, recorded while it was computed,
and an analysis that adopts the piece adopts its dependencies too, so that an analysis's
dependencies never depend on what the process analysed before (``Program.tracking``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Dependencies:
    """The files read and the lookups made by an analysis (or by a piece of one).

    A piece adopted by another (``add``) is kept by reference, not copied: an analysis adopts
    the same shared pieces (an imported module's dependencies, a function summary's) again at
    every use, inside as many pieces being computed as are open around it, and copying made
    that cost the size of the piece times the nesting at every lookup (quadratic: a file of
    setuptools spent over 20 minutes in it). What a piece and everything it adopted depend on
    is read from ``flattened()``, once, where it is stored or reported.

    Attributes:
        files: Repository-relative paths of the files read (their content decides the result).
        names: Import name -> the repository path it resolved to, or None when it resolved to
            no file of the repository (a library, or nothing): a file added later may take it.
        templates: Template name -> the path it resolved to, or None.
        modules: Path of each module loaded -> its import name (``module_index``), which names
            its functions in what the analysis reports (a new ``__init__.py`` may change it).
        functions: Ids of the functions whose summaries were read, within one process only
            (``summary_sharing.adopt`` checks them; not part of ``to_json``).
        parts: The pieces adopted (``add``), each once; they may adopt each other in a cycle
            (a module whose body looks itself up), which ``flattened`` visits once.
    """

    files: set[str] = field(default_factory=set)
    names: dict[str, str | None] = field(default_factory=dict)
    templates: dict[str, str | None] = field(default_factory=dict)
    modules: dict[str, str | None] = field(default_factory=dict)
    functions: set[str] = field(default_factory=set)
    parts: dict[int, "Dependencies"] = field(default_factory=dict, repr=False, compare=False)

    def add(self, other: "Dependencies") -> None:
        """Adopts ``other``: what it depends on, now and what is added to it later, is what
        these depend on too (kept by reference; O(1))."""
        if other is not self:
            self.parts.setdefault(id(other), other)

    def flattened(self) -> "Dependencies":
        """Returns a new ``Dependencies``, without parts, holding these and every adopted
        piece's files and lookups (each piece visited once; O(size of all of them))."""
        flat = Dependencies()
        seen: set[int] = set()
        stack: list[Dependencies] = [self]
        while stack:
            piece = stack.pop()
            if id(piece) in seen:
                continue
            seen.add(id(piece))
            flat.files |= piece.files
            flat.names.update(piece.names)
            flat.templates.update(piece.templates)
            flat.modules.update(piece.modules)
            flat.functions |= piece.functions
            stack.extend(piece.parts.values())
        return flat

    def to_json(self, shas: dict[str, str] | None = None, *, leave_out: str = "") -> dict[str, object]:
        """Returns ``{"files": {path: sha256 or ""}, "names", "templates", "modules"}`` of
        ``flattened()``, sorted; ``shas`` gives each file's hash (``""`` when unknown);
        ``leave_out`` is a path not listed (the analysed file itself, whose hash is recorded
        beside)."""
        known = shas or {}
        flat = self.flattened() if self.parts else self
        return {"files": {p: known.get(p, "") for p in sorted(flat.files) if p != leave_out},
                "names": dict(sorted(flat.names.items())), "templates": dict(sorted(flat.templates.items())),
                "modules": dict(sorted(flat.modules.items()))}
