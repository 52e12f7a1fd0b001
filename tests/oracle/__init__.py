"""The CPython 3.14 oracle for the parser tests: a canonical tree form and a Pyodide runner."""
