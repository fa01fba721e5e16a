#!/usr/bin/env python3
"""Turns the text output of `perf script` into a self-contained SVG flame graph.

    perf record -F 999 --call-graph dwarf -o perf.data -- COMMAND...
    perf script -i perf.data --no-inline | python3 scripts/flamegraph.py \
        --title "loop" > loop.svg

Each sample of `perf script` (recorded with -g or --call-graph) is a header
line (comm pid/tid time: period event:) and then its stack, one indented
`address symbol+offset (dso)` line per frame, leaf first; samples are
separated by a blank line. Identical stacks are folded (root first, offsets
stripped, `[unknown]` frames dropped; a sample with no known frame at all
counts as one `[unknown]` frame) and drawn as boxes whose width is their
share of the samples, stacked by depth with the root at the bottom. Hovering
a box in a browser shows its full symbol, sample count and percentage.

Options: --title TEXT, --width PIXELS (1200), --min-width PIXELS (boxes
narrower than this are left out, 0.1), --folded FILE (also write the folded
stacks, `a;b;c COUNT` per line), --by-thread (the thread name as root frame),
-o FILE (default: standard output). The input is a file argument or stdin.
"""

import argparse
import collections
import re
import sys
import zlib
from xml.sax.saxutils import escape, quoteattr

HEADER = re.compile(r"^(.*?)\s+\d+(?:/\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
FRAME_HEIGHT, FONT_SIZE, CHAR_WIDTH = 16, 11, 0.6  # char width in font sizes
PAD, TITLE_HEIGHT = 10, 44


def frame_symbol(line):
    """`  addr symbol+0x1f (dso)` -> `symbol`, or None for an unknown frame."""
    parts = line.strip().split(None, 1)
    if len(parts) < 2:
        return None
    rest = parts[1]
    if rest.endswith(")") and " (" in rest:
        rest = rest.rsplit(" (", 1)[0]
    symbol = OFFSET.sub("", rest.strip())
    if not symbol or symbol == "[unknown]":
        return None
    return symbol.replace(";", ":")


def fold(lines, by_thread=False):
    """Counts of each stack (a tuple of symbols, root first) in perf script text."""
    counts = collections.Counter()
    comm, frames = None, []

    def finish():
        if comm is not None:
            stack = frames[::-1] or ["[unknown]"]
            counts[tuple(([comm] if by_thread else []) + stack)] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            finish()
            comm, frames = None, []
        elif line.startswith("#"):
            continue
        elif not line[0].isspace():
            finish()
            match = HEADER.match(line)
            comm, frames = (match.group(1) if match else line.split()[0]).strip(), []
        elif comm is not None:
            symbol = frame_symbol(line)
            if symbol is not None:
                frames.append(symbol)
    finish()
    return counts


class Node:
    def __init__(self, name):
        self.name, self.count, self.children = name, 0, {}


def build_tree(counts):
    root = Node("all")
    for stack, count in counts.items():
        root.count += count
        node = root
        for name in stack:
            node = node.children.setdefault(name, Node(name))
            node.count += count
    return root


def shorten_templates(name):
    """Replaces the inside of each outermost <...> by an ellipsis."""
    out, depth, i = [], 0, 0
    while i < len(name):
        operator = re.match(r"operator(<<=|>>=|<=>|<<|>>|<=|>=|->|<|>)", name[i:])
        if operator and depth == 0:
            out.append(operator.group(0))
            i += len(operator.group(0))
            continue
        c = name[i]
        if c == "<":
            if depth == 0:
                out.append("<…")
            depth += 1
        elif c == ">" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(">")
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out)


def label(name, width):
    """The text shown in a box `width` pixels wide ("" if nothing fits)."""
    fits = int((width - 6) / (FONT_SIZE * CHAR_WIDTH))
    if fits < 3:
        return ""
    if len(name) > fits:
        name = shorten_templates(name)
    if len(name) > fits:
        name = name[: fits - 2] + ".."
    return name


def colour(name):
    """A warm colour that depends only on the symbol name."""
    h = zlib.crc32(name.encode())
    v1, v2, v3 = (h & 0xFF) / 255, ((h >> 8) & 0xFF) / 255, ((h >> 16) & 0xFF) / 255
    return "rgb(%d,%d,%d)" % (205 + 50 * v3, 230 * v1, 55 * v2)


def xml_text(s):
    return escape("".join(c for c in s if c >= " " or c == "\t"))


def render(root, title, width, min_width):
    """The SVG document (a string) for the tree of frames under `root`."""
    total = max(root.count, 1)
    scale = (width - 2 * PAD) / total
    boxes = []  # (depth, x, width, node)

    def place(node, depth, x):
        w = node.count * scale
        if w < min_width:
            return
        boxes.append((depth, x, w, node))
        for child in sorted(node.children.values(), key=lambda n: n.name):
            place(child, depth + 1, x)
            x += child.count * scale

    place(root, 0, PAD)
    depth = max((d for d, _, _, _ in boxes), default=0) + 1
    height = TITLE_HEIGHT + depth * FRAME_HEIGHT + 2 * PAD
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" '
        'viewBox="0 0 %d %d">' % (width, height, width, height),
        "<style>text { font-family: monospace; font-size: %dpx; fill: #000; }"
        " .title { font-size: 17px; } .sub { fill: #555; }"
        " g:hover rect { stroke: #000; stroke-width: 0.5; }</style>" % FONT_SIZE,
        '<rect x="0" y="0" width="%d" height="%d" fill="#f8f8f8"/>' % (width, height),
        '<text class="title" x="%d" y="24" text-anchor="middle">%s</text>'
        % (width // 2, xml_text(title)),
        '<text class="sub" x="%d" y="40">%d samples; hover over a box for its symbol</text>'
        % (PAD, root.count),
    ]
    for d, x, w, node in boxes:
        y = height - PAD - (d + 1) * FRAME_HEIGHT
        tip = "%s (%d samples, %.2f%%)" % (node.name, node.count, 100.0 * node.count / total)
        text = label(node.name, w)
        out.append(
            '<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill=%s rx="2"/>'
            % (xml_text(tip), x, y, w, FRAME_HEIGHT - 1, quoteattr(colour(node.name)))
            + ('<text x="%.1f" y="%d">%s</text>' % (x + 3, y + FRAME_HEIGHT - 4, xml_text(text))
               if text else "")
            + "</g>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input", nargs="?", help="perf script output (default: stdin)")
    parser.add_argument("--title", default="Flame graph")
    parser.add_argument("--width", type=int, default=1200, help="pixels (default 1200)")
    parser.add_argument("--min-width", type=float, default=0.1,
                        help="leave out boxes narrower than this many pixels (default 0.1)")
    parser.add_argument("--folded", help="also write the folded stacks to this file")
    parser.add_argument("--by-thread", action="store_true",
                        help="the thread name as the root frame of each stack")
    parser.add_argument("-o", "--output", help="the SVG file (default: stdout)")
    args = parser.parse_args()

    if args.input:
        with open(args.input, encoding="utf-8", errors="replace") as f:
            counts = fold(f, args.by_thread)
    else:
        stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
        counts = fold(stdin, args.by_thread)
    if not counts:
        sys.exit("flamegraph.py: no samples in the input")
    if args.folded:
        with open(args.folded, "w", encoding="utf-8") as f:
            for stack, count in sorted(counts.items()):
                f.write("%s %d\n" % (";".join(stack), count))
    svg = render(build_tree(counts), args.title, args.width, args.min_width)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)
    else:
        sys.stdout.reconfigure(encoding="utf-8")
        sys.stdout.write(svg)


if __name__ == "__main__":
    main()
