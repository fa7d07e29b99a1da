#!/usr/bin/env python3
"""family_switches.py - count the switches on the encoder family in src/**/*.c.

    python3 tools/family_switches.py            each switch, by file, and the count
    python3 tools/family_switches.py --check    exit 1 above the ceiling (make test-native runs this)

A family is a row of traits (src/families/family.c, family.h, docs/adding-a-family.md):
the code reads traits, not families. A switch on the family is what the
traits exist to replace, and each one is counted:
  - a name of a layout, BLI_FAM_<NAME> (BLI_FAM_N, the table's size, aside);
  - a model_type compared by name: strcmp(..., "<type>") with one of the
    types of src/families/family.c's table.
The table file itself (src/families/family.c) is where families are named: not
counted. Issue 33 set the ceiling: at most 16 in all of src/**/*.c.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, 'src')
TABLES = {'family.c'}
CEILING = 16


def family_types():
    """The model_types src/families/family.c's FAMILIES table runs (kind >= 0)."""
    text = open(os.path.join(SRC, 'families', 'family.c'), encoding='utf-8').read()
    return set(re.findall(r'\{"([a-z0-9_-]+)", BLI_FAM_[A-Z0-9_]+', text))


def switches():
    types = family_types()
    fam = re.compile(r'\bBLI_FAM_(?!N\b)[A-Z0-9_]+')
    cmp = re.compile(r'strn?cmp\([^;]*?"(%s)"' % '|'.join(re.escape(t) for t in sorted(types)))
    found = []
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(SRC) for f in fs)
    for path in paths:
        name = os.path.relpath(path, SRC)
        if not name.endswith('.c') or os.path.basename(name) in TABLES:
            continue
        for no, line in enumerate(open(path, encoding='utf-8'), 1):
            code = line.split('//')[0]
            if code.lstrip().startswith(('/*', '*')):
                continue  # a comment's words
            n = len(fam.findall(code)) + len(cmp.findall(code))
            if n:
                found.append((name, no, n, line.strip()))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true', help=f'exit 1 above {CEILING}')
    args = ap.parse_args()
    found = switches()
    total = sum(n for _, _, n, _ in found)
    if not args.check:
        for name, no, n, line in found:
            print(f'{name}:{no}: {n}  {line}')
    print(f'{total} switches on the family in src/**/*.c outside {", ".join(sorted(TABLES))} (ceiling {CEILING})')
    if args.check and total > CEILING:
        print('family_switches: above the ceiling: read a trait (src/families/family.h) instead', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
