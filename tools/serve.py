#!/usr/bin/env python3
"""Static server for the built site: python3 tools/serve.py [DIR [PORT]]

DIR defaults to dist (the site `make site` builds) and PORT to 8000, so a
plain `python3 tools/serve.py` serves the page on http://127.0.0.1:8000/.

Binds 127.0.0.1 only. Serves .wasm as application/wasm and the gzip model
bundles (.gz) as application/octet-stream WITHOUT a Content-Encoding header,
so the page receives the compressed bytes and decompresses them itself.
Sends the headers netlify.toml gives each path (Content-Security-Policy,
caching, Content-Disposition for the one-file pages), so local runs behave
like the published site and catch anything it would block.
"""
import fnmatch
import functools
import http.server
import pathlib
import re
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent


def netlify_headers():
    """[(pattern, {header: value})] from netlify.toml's [[headers]] rules."""
    try:
        text = (ROOT / "netlify.toml").read_text()
    except OSError:
        return []
    rules, rule = [], None
    for line in (l.strip() for l in text.splitlines()):
        if line == "[[headers]]":
            rule = ["", {}]
            rules.append(rule)
        elif line.startswith("[") and line != "[headers.values]":
            rule = None
        elif rule is not None:
            m = re.match(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"$', line)
            if m and m.group(1) == "for":
                rule[0] = m.group(2)
            elif m:
                rule[1][m.group(1)] = m.group(2)
    return [(pattern, values) for pattern, values in rules if pattern]


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".gz": "application/octet-stream",
        ".blb": "application/octet-stream",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".css": "text/css",
        ".svg": "image/svg+xml",
        ".json": "application/json",
    }
    rules = netlify_headers()

    def end_headers(self):
        path = urllib.parse.urlsplit(self.path).path
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
        for pattern, values in self.rules:  # later rules win, as in tests/browser/server.mjs
            if fnmatch.fnmatchcase(path, pattern):
                headers.update(values)
        headers.pop("Content-Type", None)  # set from the file's extension (same values)
        for name, value in headers.items():
            self.send_header(name, value)
        super().end_headers()

    def guess_type(self, path):
        # Never let mimetypes map .gz to an encoding: bundles are opaque bytes.
        suffix = pathlib.PurePath(path).suffix.lower()
        return self.extensions_map.get(suffix) or super().guess_type(path)


def parse_args(args):
    """(directory, port) from the command line's arguments; SystemExit with
    a message when they cannot be used."""
    if len(args) > 2 or any(a in ("-h", "--help") for a in args):
        sys.exit("usage: serve.py [DIR [PORT]]   (defaults: dist 8000)")
    directory = args[0] if args else str(ROOT / "dist")
    try:
        port = int(args[1]) if len(args) > 1 else 8000
    except ValueError:
        sys.exit(f"serve.py: the port must be a number, not {args[1]!r}")
    if not 0 < port < 65536:
        sys.exit(f"serve.py: the port must be 1-65535, not {port}")
    if not pathlib.Path(directory, "index.html").is_file():
        sys.exit(f"serve.py: {directory} has no index.html; build the site first (make site)")
    return directory, port


def main():
    directory, port = parse_args(sys.argv[1:])
    handler = functools.partial(Handler, directory=directory)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving {directory} on http://127.0.0.1:{port}/", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
