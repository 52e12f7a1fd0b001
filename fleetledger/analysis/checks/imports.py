"""Imports of modules bandit blacklists (B401-B411): an import is not a weakness."""

from __future__ import annotations

import ast

from ..assessment import PROBABLE, Assessment, Site


def assess(site: Site) -> Assessment | None:
    """Judges an import of ``pickle``, ``subprocess``, ``xml.*``, ``telnetlib``, ``ftplib``...

    Importing a module runs none of its dangerous functions. Every call that does (``pickle.
    loads``, ``subprocess.run(shell=True)``, ``xml.etree.ElementTree.parse``...) is flagged and
    judged at the call site, so the import adds nothing but noise.

    Args:
        site: The flagged import.

    Returns:
        A ``not_vulnerable`` assessment, or None when the node is not an import.
    """
    if not isinstance(site.node, (ast.Import, ast.ImportFrom)):
        return None
    fact = (f"`{site.tree.segment(site.node, 50)}` only imports a module; each call that could misuse it "
            "is flagged and judged where it happens.")
    return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=site.detector_cwe, facts=(fact,),
                      signals={"sink": "import", "source": "none", "sanitised": False})
