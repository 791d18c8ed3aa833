"""An OpenAI-compatible chat-completions server on 127.0.0.1 for the AI assistant's
tests: it checks each request as a real server would (path, bearer key, model, the
shape of the messages), keeps it for the test to read, and answers as the test
scripts it: a reply, an error status, a body that is not JSON, or a late answer."""
from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

MODEL = "socialpub-test-model"
API_KEY = "sk-test-assistant"


@dataclass
class Answer:
    content: str = "Hello!"
    status: int = 200
    # Sent as the body instead of a chat completion (malformed answers).
    raw: bytes | None = None
    # Seconds before answering: longer than the client's timeout makes it give up.
    delay: float = 0.0
    headers: dict = field(default_factory=dict)


@dataclass
class Request:
    path: str
    headers: dict
    body: dict

    @property
    def messages(self) -> list[dict]:
        return self.body["messages"]

    @property
    def system(self) -> str:
        return self.messages[0]["content"]


class LlmServer:
    """Answers each request with the next scripted Answer (the last one repeats)."""

    def __init__(self, *, api_key: str = API_KEY, model: str = MODEL):
        self.api_key, self.model = api_key, model
        self.answers: list[Answer] = []
        self.requests: list[Request] = []
        self.refusals: list[str] = []
        # Called with each accepted request before it is answered: what happens
        # elsewhere while the model is thinking.
        self.meanwhile: Callable[[Request], None] | None = None
        self.lock = threading.Lock()
        self.base_url = ""

    def script(self, *answers: Answer | str) -> None:
        with self.lock:
            self.answers = [Answer(content=answer) if isinstance(answer, str) else answer for answer in answers]

    def reset(self) -> None:
        with self.lock:
            self.answers, self.requests, self.refusals, self.meanwhile = [], [], [], None

    def _next(self) -> Answer:
        with self.lock:
            if len(self.answers) > 1:
                return self.answers.pop(0)
            return self.answers[0] if self.answers else Answer()

    def _problem(self, path: str, headers, body) -> tuple[int, str] | None:
        """What a real server would refuse in this request."""
        if path != "/v1/chat/completions":
            return 404, f"unknown path {path}"
        if headers.get("Authorization") != f"Bearer {self.api_key}":
            return 401, "invalid api key"
        if not isinstance(body, dict) or body.get("model") != self.model:
            return 404, f"unknown model {body.get('model') if isinstance(body, dict) else None!r}"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, "messages must be a non-empty list"
        for message in messages:
            if message.get("role") not in ("system", "user", "assistant") or not isinstance(message.get("content"), str):
                return 400, f"malformed message {message!r}"
        if messages[0]["role"] != "system" or messages[-1]["role"] != "user":
            return 400, "expected the system prompt first and a user message last"
        return None

    def handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: bytes, headers: dict | None = None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, as it should

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                problem = server._problem(self.path, self.headers, body)
                if problem is not None:
                    with server.lock:
                        server.refusals.append(problem[1])
                    self._send(problem[0], json.dumps({"error": {"message": problem[1]}}).encode())
                    return
                with server.lock:
                    server.requests.append(Request(self.path, dict(self.headers), body))
                answer = server._next()
                if server.meanwhile is not None:
                    server.meanwhile(server.requests[-1])
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.raw is not None:
                    self._send(answer.status, answer.raw, answer.headers)
                    return
                completion = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "model": server.model,
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": answer.content},
                        "finish_reason": "stop",
                    }],
                }
                payload = completion if answer.status == 200 else {"error": {"message": answer.content}}
                self._send(answer.status, json.dumps(payload).encode(), answer.headers)

        return Handler

    def __enter__(self) -> "LlmServer":
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
