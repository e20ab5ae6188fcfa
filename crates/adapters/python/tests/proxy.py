"""A local HTTP proxy in front of the real server that can fail on purpose: `cut()` stops it
(the service is down), `drop_answer(path)` forwards the next request to `path` and then closes
the connection without answering (an answer lost on the way back)."""

import http.server
import threading

import httpx


class Proxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.dropping: set[str] = set()
        self.forwarded: list[tuple[str, str, dict]] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                proxy.forwarded.append((self.command, self.path, {k.lower(): v for k, v in headers.items()}))
                answer = httpx.request(self.command, proxy.upstream + self.path, headers=headers, content=body,
                                       timeout=60.0)
                if self.path in proxy.dropping:
                    proxy.dropping.discard(self.path)
                    self.close_connection = True
                    return  # the work was done; the answer never arrives
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_DELETE = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def drop_answer(self, path: str) -> None:
        self.dropping.add(path)

    def cut(self) -> None:
        self.server.shutdown()
        self.server.server_close()
