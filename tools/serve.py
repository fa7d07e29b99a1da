#!/usr/bin/env python3
"""Static server for the built site: python3 tools/serve.py DIR PORT

Binds 127.0.0.1 only. Serves .wasm as application/wasm and the gzip model
bundles (.gz) as application/octet-stream WITHOUT a Content-Encoding header,
so the page receives the compressed bytes and decompresses them itself.
Sends the same Content-Security-Policy as netlify.toml, so local runs catch
anything the published site would block.
"""
import functools
import http.server
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def csp_from_netlify():
    try:
        text = (ROOT / "netlify.toml").read_text()
    except OSError:
        return None
    m = re.search(r'Content-Security-Policy\s*=\s*"([^"]+)"', text)
    return m.group(1) if m else None


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
    csp = csp_from_netlify()

    def end_headers(self):
        if self.csp:
            self.send_header("Content-Security-Policy", self.csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
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
