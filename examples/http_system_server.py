"""A toy dialogue system served over todeval's HTTP system protocol (standard library only).

Run it, then point the benchmark at it::

    python examples/http_system_server.py --port 8765
    todeval run booking --system http --system-url http://127.0.0.1:8765/ --user agenda ...

Protocol (see docs/llm-systems.md): every observation of the game master arrives as
``POST /`` with ``{"session_id", "observation", "tools" and "task_set" on the first call}``;
the reply is ``{"action": {"name": <tool>, "arguments": {...}}}`` or ``{"text": ...}``.

The "system" is deliberately trivial: it books restaurants and hotels the user names
("... called <name>.") with regular expressions for people, day, time and nights. It exists to
show the protocol, not to be good. With ``--port 0`` the OS picks a free port; the first line
printed is ``listening on http://HOST:PORT/``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
INFORMABLE = {
    "restaurant": ("area", "pricerange", "food", "name"),
    "hotel": ("area", "pricerange", "type", "name", "internet", "parking", "stars"),
}
CONTACT = ("phone", "postcode", "address")
BOOK_SLOTS = {"restaurant": ("people", "day", "time"), "hotel": ("people", "day", "stay")}
PATTERNS = {
    "people": re.compile(r"\b(\d+)\s*(?:people|persons?|guests?)\b"),
    "stay": re.compile(r"\b(\d+)\s*nights?\b"),
    "time": re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b"),
}
NAME = re.compile(r"\b(?:called|named)\s+(?:the\s+)?([a-z0-9 '&-]+?)\s*(?:[.,!?;]|$)")


@dataclass
class Session:
    domain: str | None = None
    slots: dict[str, str] = field(default_factory=dict)
    row: dict[str, str] | None = None


def followup(message: str) -> dict[str, Any]:
    return {"action": {"name": "followup", "arguments": {"message": message}}}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"action": {"name": name, "arguments": arguments}}


def understand(session: Session, text: str) -> None:
    """Update the session from one user message."""
    text = text.lower()
    if re.search(r"\b(restaurant|table|eat|dinner|lunch)\b", text):
        session.domain = "restaurant"
    elif re.search(r"\b(hotel|guesthouse|guest house|room|stay)\b", text):
        session.domain = "hotel"
    elif "train" in text:
        session.domain = "train"
    name = NAME.search(text)
    if name:
        session.slots["name"] = name.group(1).strip()
        session.row = None
    for day in DAYS:
        if day in text:
            session.slots["day"] = day
    for slot, pattern in PATTERNS.items():
        found = pattern.search(text)
        if found:
            value = found.group(0) if slot == "time" else found.group(1)
            if slot == "time":
                hours, minutes = value.split(":")
                value = f"{int(hours):02d}:{minutes}"
            session.slots[slot] = value


def next_action(session: Session) -> dict[str, Any]:
    """Search, ask, or book, depending on what is known."""
    domain = session.domain
    if domain is None:
        return followup("Hello! Are you looking for a restaurant or a hotel?")
    if domain == "train":
        return followup("Sorry, this example system only books restaurants and hotels.")
    if session.row is None:
        if "name" not in session.slots:
            return followup(f"Which {domain} would you like? Please tell me its name.")
        return call(f"retrievefrom{domain}db", {"name": session.slots["name"]})
    missing = [s for s in BOOK_SLOTS[domain] if s not in session.slots]
    if missing:
        return followup(f"I found {session.row['name']}. Please tell me: {', '.join(missing)}.")
    arguments = {k: session.row[k] for k in (*INFORMABLE[domain], *CONTACT) if k in session.row}
    arguments.update({s: session.slots[s] for s in BOOK_SLOTS[domain]})
    return call(f"validate{domain}booking", arguments)


def respond(session: Session, observation: dict[str, Any]) -> dict[str, Any]:
    kind = observation.get("kind")
    if kind == "user_message":
        understand(session, str(observation.get("text", "")))
        return next_action(session)
    if kind == "db_result":
        rows = observation.get("rows") or []
        if not rows:
            session.slots.pop("name", None)
            return followup("Sorry, I could not find that. Could you check the name?")
        session.row = rows[0]
        return next_action(session)
    if kind == "booking_result":
        if observation.get("ok"):
            return followup(f"Booked! Your reference number is {observation['reference']}.")
        session.row = None
        return followup(f"Sorry, that did not work: {observation.get('message', '')}")
    return followup("Sorry, something went wrong. Could you say that again?")


class SystemServer(ThreadingHTTPServer):
    """Holds the sessions (one per episode) of this server."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, Handler)
        self.sessions: dict[str, Session] = {}
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: SystemServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many observations
    disable_nagle_algorithm = True  # headers and body leave at once (no delayed-ACK stall)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        try:
            request = json.loads(self.rfile.read(length))
            session_id = str(request["session_id"])
            observation = dict(request["observation"])
        except (ValueError, KeyError, TypeError):
            self._send(400, {"error": "expected JSON with session_id and observation"})
            return
        with self.server.lock:
            session = self.server.sessions.setdefault(session_id, Session())
            reply = respond(session, observation)
        self._send(200, reply)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return None  # quiet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0: pick a free port")
    args = parser.parse_args()
    server = SystemServer((args.host, args.port))
    port = server.server_address[1]
    print(f"listening on http://{args.host}:{port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
