#!/usr/bin/env python3
"""A small stand-in for Grafana Loki's query_range API, for tests on loopback.

Debian 12 has no Loki package, so the Loki collector is tested against this server.
It implements the part of GET /loki/api/v1/query_range the collector uses, with
Loki's documented semantics:
  - query: a stream selector of equality matchers only, {a="x", b="y"}; anything
    else is answered 400 like a LogQL parse error;
  - start/end: nanosecond Unix epochs (required here), start inclusive, end exclusive;
  - limit: entries per answer (default 100; over 5000 is refused with 400, as
    Loki's max_entries_limit_per_query);
  - direction: forward (oldest first) or backward (newest first; Loki's default).
Entries that share a timestamp are returned in a different order on every request
(Loki does not promise one), so a client must not rely on their position.

Usage: loki_standin.py --data streams.json --port-file F [--request-log L]
                       [--fail-after N] [--delay-ms MS]
streams.json: {"streams": [{"stream": {"host": "n1"}, "values": [["<ns>", "line"], ...]}]}
--fail-after N answers HTTP 500 to every request after the first N;
--delay-ms sleeps before each answer (to exercise client deadlines).
"""
import argparse
import json
import os
import re
import sys
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

MAX_LIMIT = 5000
SELECTOR = re.compile(r'^\s*\{\s*(.*?)\s*\}\s*$', re.S)
MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def parse_selector(query):
    m = SELECTOR.match(query)
    if not m:
        raise ValueError("parse error: expected a stream selector {label=\"value\", ...}")
    body, matchers, pos = m.group(1), {}, 0
    while pos < len(body):
        mm = MATCHER.match(body, pos)
        if not mm or mm.end() == pos:
            raise ValueError("parse error at position %d: only label=\"value\" matchers are supported" % pos)
        matchers[mm.group(1)] = re.sub(r'\\(.)', r'\1', mm.group(2))
        pos = mm.end()
    if not matchers:
        raise ValueError("parse error: queries require at least one matcher")
    return matchers


class State:
    def __init__(self, args):
        with open(args.data) as f:
            self.streams = json.load(f)["streams"]
        self.request_log = args.request_log
        self.fail_after = args.fail_after
        self.delay = args.delay_ms / 1000.0
        self.requests = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep the test output clean
        pass

    def answer(self, status, body, content_type):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        state = self.server.state
        state.requests += 1
        number = state.requests
        url = urlparse(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        if state.request_log:
            with open(state.request_log, "a") as f:
                f.write(json.dumps({"path": url.path, "params": params}) + "\n")
        if state.delay:
            time.sleep(state.delay)
        if url.path == "/ready":
            return self.answer(200, "ready\n", "text/plain")
        if url.path != "/loki/api/v1/query_range":
            return self.answer(404, "404 page not found\n", "text/plain")
        if state.fail_after is not None and number > state.fail_after:
            return self.answer(500, "internal server error: stand-in told to fail\n", "text/plain")
        try:
            matchers = parse_selector(params.get("query", ""))
            start, end = int(params["start"]), int(params["end"])
            limit = int(params.get("limit", "100"))
            direction = params.get("direction", "backward")
        except KeyError as e:
            return self.answer(400, "missing parameter %s\n" % e, "text/plain")
        except ValueError as e:
            return self.answer(400, "%s\n" % e, "text/plain")
        if limit <= 0 or limit > MAX_LIMIT:
            return self.answer(400, "max entries limit per query exceeded, limit > max_entries_limit (%d > %d)\n"
                               % (limit, MAX_LIMIT), "text/plain")
        if direction not in ("forward", "backward"):
            return self.answer(400, "invalid direction\n", "text/plain")
        if end < start:
            return self.answer(400, "end timestamp must not be before start time\n", "text/plain")

        picked = []
        for index, s in enumerate(state.streams):
            if all(s["stream"].get(k) == v for k, v in matchers.items()):
                for ts, line in s["values"]:
                    if start <= int(ts) < end:
                        tie = zlib.crc32(("%d|%d|%s" % (number, index, line)).encode())
                        picked.append((int(ts), tie, index, ts, line))
        picked.sort(key=lambda e: (e[0], e[1]), reverse=(direction == "backward"))
        picked = picked[:limit]
        by_stream = {}
        for _, _, index, ts, line in picked:
            by_stream.setdefault(index, []).append([ts, line])
        result = [{"stream": state.streams[i]["stream"], "values": v} for i, v in sorted(by_stream.items(), reverse=True)]
        body = {"status": "success",
                "data": {"resultType": "streams", "result": result,
                         "stats": {"summary": {"totalEntriesReturned": len(picked)}}}}
        return self.answer(200, json.dumps(body), "application/json")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--request-log")
    p.add_argument("--fail-after", type=int)
    p.add_argument("--delay-ms", type=int, default=0)
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.state = State(args)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)  # appears complete or not at all
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
