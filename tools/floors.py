#!/usr/bin/env python3
"""floors.py - the floors of src/, drawn from the code itself.

    python3 tools/floors.py            the folders, then the rooms, by floor, top first, and any circle
    python3 tools/floors.py --check    exit 1 when a circle exists between rooms or between
                                       folders (make test runs this)

A room is a C source with the header of the same name (bundle.c + bundle.h);
a header with no source of its name (bundle_impl.h, conv_state.h) is a room
of its own. Room A stands on room B when A uses a function or variable that
only B's source defines (`nm` on each file compiled alone: A's undefined
symbols against every other file's defined ones), or when A includes B and B
is a header alone (its types and inline helpers are all it offers). Including
a source's header only for its types draws no arrow: its functions do. A room's floor
is one above the highest room it stands on, so with no circle every arrow runs
down. A circle is a set of rooms that stand on each other (a strongly
connected component of more than one room); it is printed with the names that
tie each pair, so it can be cut where it is.

src/ has a folder per subsystem (base/, text/, kernels/, families/, format/,
model/, analysis/, convert/, and the front ends cli/, wasm/, fuzz/), with
bertlens.h, the public header, alone at its top. Folder A stands on folder B
when a room of A stands on a room of B; the folders must have floors too, so
a room only ever reaches down or across its own folder.

Needs cc and nm (binutils), nothing else: every source is compiled once,
-O0, into a temporary folder (about 20 s on 2 cores).
"""
import argparse
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, 'src')
CFLAGS = ['-O0', '-std=c11', '-D_POSIX_C_SOURCE=200809L', '-pthread', '-msse4.1', '-w']


def room_of(name):
    return os.path.splitext(name)[0]


def includes(path):
    """The quoted includes of one file (its own text: a header's includes are its room's)."""
    with open(path, encoding='utf-8', errors='replace') as f:
        return re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M)


def symbols(c_file, tmp):
    """(defined, undefined) global symbols of one source compiled alone."""
    obj = os.path.join(tmp, os.path.basename(c_file) + '.o')
    r = subprocess.run(['cc', *CFLAGS, '-I', SRC, '-c', c_file, '-o', obj], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f'floors.py: cc failed on {c_file}:\n{r.stderr}')
    out = subprocess.run(['nm', '-P', obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == 'U':
            undefined.add(name)
        elif kind in 'TDBRCVW':
            defined.add(name)
    return defined, undefined


def folder_of(path):
    """A file's folder under src/ ('' for the public header at its top)."""
    return os.path.dirname(os.path.relpath(path, SRC))


def graph():
    """(rooms, edges, folder of each room); files are paths under src/, rooms named by file name."""
    files = sorted(os.path.relpath(os.path.join(d, f), SRC)
                   for d, _, fs in os.walk(SRC) for f in fs if f.endswith(('.c', '.h')))
    folder = {}
    for f in files:
        r, d = room_of(os.path.basename(f)), os.path.dirname(f)
        if folder.setdefault(r, d) != d:  # a room is one name: its source and header share a folder
            raise SystemExit(f'floors.py: {r} is in both src/{folder[r]}/ and src/{d}/')
    rooms = sorted(folder)
    edges = {r: {} for r in rooms}  # edges[a][b] = [names that tie a to b]
    sources_of = {room_of(os.path.basename(f)) for f in files if f.endswith('.c')}
    for f in files:
        a = room_of(os.path.basename(f))
        for inc in includes(os.path.join(SRC, f)):
            b = room_of(os.path.basename(inc))
            # a header with a source of its name stands for that source: an
            # arrow to it is a name used (below); a header alone is a room
            if b in edges and b != a and b not in sources_of:
                edges[a].setdefault(b, []).append(inc)
    sources = [f for f in files if f.endswith('.c')]
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        syms = dict(zip(sources, ex.map(lambda f: symbols(os.path.join(SRC, f), tmp), sources)))
    owner = {}
    for f, (defined, _) in syms.items():
        for s in defined:
            owner.setdefault(s, set()).add(room_of(os.path.basename(f)))
    for f, (_, undefined) in syms.items():
        a = room_of(os.path.basename(f))
        for s in undefined:
            o = owner.get(s)
            if o and len(o) == 1:  # a name only one room defines (not the fuzz targets' shared entry point)
                b = next(iter(o))
                if b != a:
                    edges[a].setdefault(b, []).append(s)
    return rooms, edges, folder


def folder_graph(edges, folder):
    """Folders and the arrows between them: fedges[A][B] = ['room_a -> room_b', ...]."""
    names = sorted(set(folder.values()))
    fedges = {f: {} for f in names}
    for a, bs in edges.items():
        for b in bs:
            if folder[a] != folder[b]:
                fedges[folder[a]].setdefault(folder[b], []).append(f'{a} -> {b}')
    return names, fedges


def circles(rooms, edges):
    """Strongly connected components of more than one room (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in rooms:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def floors(rooms, edges, circ):
    """Floor of each room: 1 + the highest it stands on (rooms of a circle share one floor)."""
    group = {r: r for r in rooms}
    for comp in circ:
        for r in comp:
            group[r] = comp[0]
    memo = {}

    def floor(g, seen=()):
        if g in memo:
            return memo[g]
        members = [r for r in rooms if group[r] == g]
        below = {group[b] for r in members for b in edges[r] if group[b] != g}
        memo[g] = 1 + max((floor(b) for b in below), default=0)
        return memo[g]

    return {r: floor(group[r]) for r in rooms}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true', help='exit 1 when src/ has a circle')
    args = ap.parse_args()
    rooms, edges, folder = graph()
    circ = circles(rooms, edges)
    fl = floors(rooms, edges, circ)
    names, fedges = folder_graph(edges, folder)
    fcirc = circles(names, fedges)
    ffl = floors(names, fedges, fcirc)
    label = lambda f: (f or '(top)') + '/'
    if not args.check:
        for f in range(max(ffl.values()), 0, -1):
            print(f'{f:3d}  ' + '  '.join(label(n) for n in names if ffl[n] == f))
        print()
        for f in range(max(fl.values()), 0, -1):
            print(f'{f:3d}  ' + '  '.join(f'{folder[r]}/{r}'.lstrip('/') for r in rooms if fl[r] == f))
    n_edges = sum(len(e) for e in edges.values())
    print(f'src/: {len(names)} folders on {max(ffl.values())} floors, {len(fcirc)} circles between folders')
    for comp in fcirc:
        print('folder circle: ' + ' <-> '.join(label(f) for f in comp))
        for a in comp:
            for b in comp:
                if b in fedges[a]:
                    print(f'  {label(a)} -> {label(b)}: ' + ', '.join(fedges[a][b][:6]))
    print(f'src/: {len(rooms)} rooms, {n_edges} arrows, {max(fl.values())} floors, {len(circ)} circles')
    for comp in circ:
        print('circle: ' + ' <-> '.join(comp))
        for a in comp:
            for b in comp:
                if b in edges[a]:
                    names = sorted(set(edges[a][b]))
                    print(f'  {a} -> {b}: ' + ', '.join(names[:6]) + (f' and {len(names) - 6} more' if len(names) > 6 else ''))
    return 1 if args.check and (circ or fcirc) else 0


if __name__ == '__main__':
    sys.exit(main())
