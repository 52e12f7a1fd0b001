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

    Attributes:
        files: Repository-relative paths of the files read (their content decides the result).
        names: Import name -> the repository path it resolved to, or None when it resolved to
            no file of the repository (a library, or nothing): a file added later may take it.
        templates: Template name -> the path it resolved to, or None.
        modules: Path of each module loaded -> its import name (``module_index``), which names
            its functions in what the analysis reports (a new ``__init__.py`` may change it).
    """

    files: set[str] = field(default_factory=set)
    names: dict[str, str | None] = field(default_factory=dict)
    templates: dict[str, str | None] = field(default_factory=dict)
    modules: dict[str, str | None] = field(default_factory=dict)

    def add(self, other: "Dependencies") -> None:
        """Adds ``other``'s files and lookups to these (in place)."""
        self.files |= other.files
        self.names.update(other.names)
        self.templates.update(other.templates)
        self.modules.update(other.modules)

    def to_json(self, shas: dict[str, str] | None = None, *, leave_out: str = "") -> dict[str, object]:
        """Returns ``{"files": {path: sha256 or ""}, "names", "templates", "modules"}``,
        sorted; ``shas`` gives each file's hash (``""`` when unknown); ``leave_out`` is a path
        not listed (the analysed file itself, whose hash is recorded beside)."""
        known = shas or {}
        return {"files": {p: known.get(p, "") for p in sorted(self.files) if p != leave_out},
                "names": dict(sorted(self.names.items())), "templates": dict(sorted(self.templates.items())),
                "modules": dict(sorted(self.modules.items()))}
