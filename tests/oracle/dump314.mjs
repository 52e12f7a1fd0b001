// The CPython 3.14 oracle: parses Python files with CPython 3.14's ast.parse (Pyodide, CPython
// compiled to WebAssembly, installed by `bash .ci/install-pyodide`) and prints one JSON line per
// file: {"path": ..., "ok": true, "tree": [...]} with the canonical records of canon.py, or
// {"path": ..., "ok": false, "error": "...", "line": N}.
//
// Usage: node tests/oracle/dump314.mjs [FILE...]   (with no FILE, reads one path a line on stdin)
// The Pyodide install is taken from $FLEETLEDGER_PYODIDE or else <repo>/.cache/pyodide.
import { readFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const home = process.env.FLEETLEDGER_PYODIDE || resolve(here, "..", "..", ".cache", "pyodide");
const entry = join(home, "node_modules", "pyodide", "pyodide.mjs");
if (!existsSync(entry)) {
  process.stderr.write(`Pyodide is not installed at ${home}: run \`bash .ci/install-pyodide\`\n`);
  process.exit(3);
}
const { loadPyodide } = await import(pathToFileURL(entry).href);
const py = await loadPyodide();
const namespace = py.globals.get("dict")();
py.runPython(readFileSync(join(here, "canon.py"), "utf8"), { globals: namespace });
py.runPython("import sys\nassert sys.version_info[:2] == (3, 14), sys.version", { globals: namespace });
const dumpOne = py.runPython("lambda data: dump_source(data.to_bytes())", { globals: namespace });

let paths = process.argv.slice(2);
if (paths.length === 0) {
  paths = readFileSync(0, "utf8").split("\n").filter((line) => line.length > 0);
}
for (const path of paths) {
  let line;
  try {
    const result = dumpOne(new Uint8Array(readFileSync(path)));
    line = `{"path":${JSON.stringify(path)},${result.slice(1)}`;
  } catch (error) {
    line = JSON.stringify({ path, ok: false, error: `oracle failure: ${error}`, line: null });
  }
  process.stdout.write(line + "\n");
}
