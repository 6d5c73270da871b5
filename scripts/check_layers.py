#!/usr/bin/env python3
"""The layer check: every `#include "..."` in a top-level tree follows the tree's LAYERS map.

A tree (xen/, guest/, tools/, trace/, common/) declares in <tree>/LAYERS where its includes are
looked up, which other trees it may use, and its floors, lowest first:

    include-roots: xen .     # looked up after the including file's own folder, in order
    may-use: common          # other top-level trees this tree may include from
    floor: lib arch          # entries: folders relative to the tree ("." = the root's own files)
    floor: mm                # an entry covers its subfolders unless one is listed itself

Rules, checked for each quoted include that resolves to a file in the repository (angle includes
and quoted includes that resolve to nothing are system headers):
  1. the including file's folder is searched first, then each include-root in order;
  2. inside one tree, entry A may include entry B iff A == B or B's floor is below A's: two
     entries on one floor may not include each other;
  3. another tree may be included only if it is listed in may-use;
  4. every folder holding sources (.h .hpp .c .cc .cpp .S) is covered by an entry;
  5. the include graph between folders (every directory, across all checked trees) has no cycle.
"." covers only the files directly in the tree root; a subfolder needs an entry of its own.

With no tree named, every top-level folder holding a LAYERS file is checked. A tree named on the
command line without a LAYERS file (or a --map) is read with include-roots "<tree> ." and checked
for cycles only. --report-only prints everything and exits 0, to measure a tree before its map
exists. The format and the rules: docs/layers.md.
"""

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import PurePosixPath

SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp", ".S")
INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SKIPPED_TOP = {"build"}
KEYS = ("include-roots", "may-use", "floor")


@dataclass
class LayerMap:
    """One tree's LAYERS file: where includes resolve, what it may use, its floors."""

    tree: str
    include_roots: list = field(default_factory=list)
    may_use: set = field(default_factory=set)
    floors: list = field(default_factory=list)  # floors[i] = entries on floor i+1
    has_file: bool = True

    def entry_floor(self):
        return {entry: n + 1 for n, entries in enumerate(self.floors) for entry in entries}


@dataclass
class Include:
    source: str  # repo-relative path of the including file
    line: int
    text: str  # what is between the quotes
    target: str  # repo-relative path of the file it resolves to


@dataclass
class Report:
    errors: list = field(default_factory=list)
    files: int = 0
    includes: int = 0
    folder_edges: int = 0
    cycles: int = 0


# ---- reading LAYERS files ------------------------------------------------------------------


def parse_layers(tree, text, where):
    """Returns (LayerMap, errors) for the text of <tree>/LAYERS; `where` names it in messages."""
    layer_map = LayerMap(tree)
    errors = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        error = add_line(layer_map, line) if line else None
        if error:
            errors.append(f"{where}:{number}: {error}")
    if not layer_map.include_roots:
        layer_map.include_roots = ["."]
    return layer_map, errors


def add_line(layer_map, line):
    """Adds one `key: words` line to the map; returns what is wrong with it, or None."""
    key, sep, value = line.partition(":")
    key, words = key.strip(), value.split()
    if not sep or key not in KEYS:
        return "expected 'include-roots:', 'may-use:' or 'floor:'"
    if not words:
        return f"'{key}:' lists nothing"
    if key == "include-roots":
        layer_map.include_roots.extend(words)
    elif key == "may-use":
        layer_map.may_use.update(words)
    else:
        layer_map.floors.append([normalise_entry(word) for word in words])
    return None


def normalise_entry(word):
    path = str(PurePosixPath(word))
    return "." if path in ("", ".") else path.rstrip("/")


def default_map(tree):
    """The map assumed for a tree named on the command line that has no LAYERS file."""
    return LayerMap(tree, include_roots=[tree, "."], may_use=set(), floors=[], has_file=False)


def validate_map(layer_map, root, where):
    """Entries listed twice, entries or roots that name no folder, may-use naming no tree."""
    errors = []
    seen = set()
    for entries in layer_map.floors:
        for entry in entries:
            if entry in seen:
                errors.append(f"{where}: entry '{entry}' is listed more than once")
            seen.add(entry)
            if not os.path.isdir(os.path.join(root, layer_map.tree, entry)):
                errors.append(f"{where}: entry '{entry}' is no folder under {layer_map.tree}/")
    for include_root in layer_map.include_roots:
        if not os.path.isdir(os.path.join(root, include_root)):
            errors.append(f"{where}: include-root '{include_root}' is no folder")
    for tree in sorted(layer_map.may_use):
        if not os.path.isdir(os.path.join(root, tree)):
            errors.append(f"{where}: may-use '{tree}' is no top-level folder")
    return errors


# ---- walking the trees ---------------------------------------------------------------------


def source_files(root, tree):
    """Repo-relative paths of the sources under `tree`, sorted."""
    found = []
    for folder, subfolders, names in os.walk(os.path.join(root, tree)):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in sorted(names):
            if name.endswith(SOURCE_SUFFIXES):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def quoted_includes(root, path):
    """(line number, text) of each `#include "..."` in the file."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
        for number, line in enumerate(source, 1):
            match = INCLUDE_LINE.match(line)
            if match:
                yield number, match.group(1)


def resolve(root, source, text, include_roots):
    """Rule 1: the including file's folder, then each include-root; None for a system header."""
    if os.path.isabs(text):
        return None
    for folder in [os.path.dirname(source), *include_roots]:
        candidate = os.path.normpath(os.path.join(folder, text))
        if candidate.startswith("..") or candidate.split(os.sep)[0] in SKIPPED_TOP:
            continue
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def collect_includes(root, tree, layer_map):
    files = source_files(root, tree)
    includes = []
    for path in files:
        for number, text in quoted_includes(root, path):
            target = resolve(root, path, text, layer_map.include_roots)
            if target is not None:
                includes.append(Include(path, number, text, target))
    return files, includes


# ---- rules 2 to 4 --------------------------------------------------------------------------


def top_tree(path):
    return path.split(os.sep, 1)[0] if os.sep in path else "."


def folder_in_tree(path):
    """The folder of a repo-relative file, relative to its tree ("." for the tree root)."""
    parts = os.path.dirname(path).split(os.sep)[1:]
    return "/".join(parts) if parts else "."


def entry_of(folder, entry_floor):
    """The longest listed entry covering `folder` (tree-relative); "." covers only the root."""
    if folder in entry_floor:
        return folder
    parts = folder.split("/")
    for length in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:length])
        if prefix in entry_floor:
            return prefix
    return None


def entry_name(tree, entry):
    """How messages name an entry: `xen/mm`, or `xen/` for the root's own files."""
    return f"{tree}/" if entry == "." else f"{tree}/{entry}"


def uncovered_folders(tree, files, entry_floor):
    """Rule 4: each source folder no entry covers, once."""
    folders = sorted({folder_in_tree(path) for path in files})
    return [
        f"{entry_name(tree, folder)}: source folder is covered by no entry of {tree}/LAYERS"
        for folder in folders
        if entry_of(folder, entry_floor) is None
    ]


def include_violation(include, layer_map, entry_floor):
    """Rules 2 and 3 for one include; None when it is allowed or cannot be placed."""
    tree = layer_map.tree
    other = top_tree(include.target)
    if other != tree:
        if other in layer_map.may_use:
            return None
        return (f'{include.source}:{include.line}: includes "{include.text}" from tree {other}/, '
                f"which is not in may-use of {tree}/LAYERS")
    entry_a = entry_of(folder_in_tree(include.source), entry_floor)
    entry_b = entry_of(folder_in_tree(include.target), entry_floor)
    if entry_a is None or entry_b is None or entry_a == entry_b:
        return None  # an uncovered folder is reported once by rule 4
    floor_a, floor_b = entry_floor[entry_a], entry_floor[entry_b]
    if floor_b < floor_a:
        return None
    why = "two entries on one floor" if floor_b == floor_a else "a higher floor"
    return (f'{include.source}:{include.line}: includes "{include.text}" '
            f"(entry {entry_name(tree, entry_b)}, floor {floor_b}) "
            f"from entry {entry_name(tree, entry_a)} (floor {floor_a}): {why}")


def check_tree_rules(tree, layer_map, files, includes):
    if not layer_map.has_file:
        return []
    entry_floor = layer_map.entry_floor()
    errors = uncovered_folders(tree, files, entry_floor)
    for include in includes:
        violation = include_violation(include, layer_map, entry_floor)
        if violation:
            errors.append(violation)
    return errors


# ---- rule 5: folder cycles ---------------------------------------------------------------


def folder_edges(includes):
    """{(folder A, folder B): first include making A -> B} for A != B."""
    edges = {}
    for include in includes:
        edge = (os.path.dirname(include.source), os.path.dirname(include.target))
        if edge[0] != edge[1]:
            edges.setdefault(edge, include)
    return edges


def strongly_connected(nodes, successors):
    """Tarjan's algorithm, iterative; returns the components, each a sorted list."""
    state = {"index": {}, "low": {}, "on_stack": set(), "stack": [], "components": []}
    for start in sorted(nodes):
        if start not in state["index"]:
            visit(start, successors, state)
    return state["components"]


def visit(start, successors, state):
    index, low = state["index"], state["low"]
    work = [enter(start, successors, state)]
    while work:
        node, children = work[-1]
        child = next(children, None)
        if child is None:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                state["components"].append(pop_component(node, state["stack"], state["on_stack"]))
        elif child not in index:
            work.append(enter(child, successors, state))
        elif child in state["on_stack"]:
            low[node] = min(low[node], index[child])


def enter(node, successors, state):
    state["index"][node] = state["low"][node] = len(state["index"])
    state["stack"].append(node)
    state["on_stack"].add(node)
    return node, iter(sorted(successors.get(node, ())))


def pop_component(node, stack, on_stack):
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == node:
            return sorted(component)


def shortest_cycle(start, members, successors):
    """A shortest path start -> ... -> start inside one component (breadth first)."""
    parents = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(successors.get(node, ())):
            if child not in members or child in parents:
                continue
            parents[child] = node
            if child == start:
                return unwind(start, parents)
            queue.append(child)
    return [start]


def unwind(start, parents):
    path = [start]
    node = parents[start]
    while node != start:
        path.append(node)
        node = parents[node]
    path.append(start)
    return list(reversed(path))


def cycle_errors(edges):
    successors = {}
    for source, target in edges:
        successors.setdefault(source, set()).add(target)
    nodes = set(successors) | {target for _, target in edges}
    cycles = [c for c in strongly_connected(nodes, successors) if len(c) > 1]
    return [describe_cycle(c, successors, edges) for c in cycles]


def describe_cycle(component, successors, edges):
    members = set(component)
    path = shortest_cycle(component[0], members, successors)
    lines = [f"folder cycle: {' -> '.join(path)}"]
    if len(component) > len(path) - 1:
        inside = sum(1 for source, target in edges if source in members and target in members)
        lines.append(f"  the cycle holds {len(component)} folders and {inside} folder edges: "
                     f"{' '.join(component)}")
    for source, target in zip(path, path[1:]):
        example = edges[(source, target)]
        lines.append(f'  {source} -> {target}: {example.source}:{example.line} includes "{example.text}"')
    return "\n".join(lines)


# ---- putting it together -----------------------------------------------------------------


def load_map(root, tree, override):
    """The tree's map (from --map, <tree>/LAYERS or the default) and the errors in it."""
    path = override or os.path.join(root, tree, "LAYERS")
    if not os.path.isfile(path):
        return default_map(tree), []
    where = path if override else os.path.join(tree, "LAYERS")
    with open(path, encoding="utf-8") as text:
        layer_map, errors = parse_layers(tree, text.read(), where)
    return layer_map, errors + validate_map(layer_map, root, where)


def trees_with_layers(root):
    return sorted(
        name
        for name in os.listdir(root)
        if not name.startswith(".") and os.path.isfile(os.path.join(root, name, "LAYERS"))
    )


def missing_required(root, required, overrides):
    return [
        f"{tree}/LAYERS: missing (the tree is required to declare its floors)"
        for tree in required
        if tree not in overrides and not os.path.isfile(os.path.join(root, tree, "LAYERS"))
    ]


def check(root, trees, required=(), overrides=None):
    """Runs every rule over `trees` (default: each tree with a LAYERS file); returns a Report."""
    overrides = overrides or {}
    report = Report()
    report.errors.extend(missing_required(root, required, overrides))
    chosen = trees or sorted(set(trees_with_layers(root)) | set(overrides))
    all_includes = []
    for tree in chosen:
        layer_map, map_errors = load_map(root, tree, overrides.get(tree))
        report.errors.extend(map_errors)
        files, includes = collect_includes(root, tree, layer_map)
        report.errors.extend(check_tree_rules(tree, layer_map, files, includes))
        report.files += len(files)
        report.includes += len(includes)
        all_includes.extend(includes)
    edges = folder_edges(all_includes)
    cycles = cycle_errors(edges)
    report.errors.extend(cycles)
    report.folder_edges = len(edges)
    report.cycles = len(cycles)
    return report, chosen


def summary(report, trees):
    violations = len(report.errors) - report.cycles
    return (f"check_layers: {', '.join(trees) or 'no trees'}: {report.files} files, "
            f"{report.includes} includes, {report.folder_edges} folder edges, "
            f"{report.cycles} cycles, {violations} other errors")


def parse_overrides(pairs):
    overrides = {}
    for pair in pairs:
        tree, sep, path = pair.partition("=")
        if not sep:
            raise SystemExit(f"check_layers: --map takes TREE=FILE, not '{pair}'")
        overrides[tree] = os.path.abspath(path)
    return overrides


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("trees", nargs="*", help="top-level trees to check (default: those with LAYERS)")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository root (default: the parent of scripts/)")
    parser.add_argument("--require", default="", help="comma-separated trees that must have LAYERS")
    parser.add_argument("--map", action="append", default=[], metavar="TREE=FILE",
                        help="read TREE's map from FILE instead of TREE/LAYERS (to try a draft)")
    parser.add_argument("--report-only", action="store_true", help="print the findings, exit 0")
    return parser.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    required = [tree for tree in args.require.split(",") if tree]
    report, trees = check(args.root, args.trees, required, parse_overrides(args.map))
    for error in report.errors:
        print(error)
    print(summary(report, trees))
    return 0 if args.report_only or not report.errors else 1


if __name__ == "__main__":
    sys.exit(main())
