#!/usr/bin/env python3
"""Static server for the built site: python3 tools/serve.py DIR PORT

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


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: serve.py DIR PORT")
    directory, port = sys.argv[1], int(sys.argv[2])
    handler = functools.partial(Handler, directory=directory)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving {directory} on http://127.0.0.1:{port}/", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
