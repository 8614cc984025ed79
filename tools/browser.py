"""A headless Chromium driven through the DevTools protocol over a pipe (no driver, no extra package).

The browser tests of the book (``tests/book``) and the decks (``tests/test_slides.py``) open pages with
it, **with the network blocked**: every request that is not for ``allowed_hosts`` (or a file: URL) is
failed and recorded in ``Page.external``. Console errors, uncaught exceptions and failed requests are
recorded too. One Chromium process serves every page of a test session.

    with Browser() as browser:
        page = browser.open("http://127.0.0.1:8000/index.html")
        page.evaluate("document.title"); page.screenshot(path)
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    """The path of an installed Chromium (``$CHROMIUM`` first), or None."""
    candidates = [os.environ.get("CHROMIUM", "")] + [shutil.which(name) or "" for name in CHROMIUM_NAMES]
    return next((c for c in candidates if c and Path(c).exists()), None)


def _above_4(fd: int) -> int:
    """A copy of ``fd`` numbered 5 or more (not inherited), the original closed."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


@dataclass
class Page:
    """What happened while one page loaded."""

    url: str
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    failed: list[str] = field(default_factory=list)  # local requests that failed or answered >= 400
    external: list[str] = field(default_factory=list)  # requests that would have left the machine
    browser: Browser | None = None

    def evaluate(self, expression: str, *, await_promise: bool = False):
        """The value of the JavaScript ``expression`` in the page (JSON-serialisable)."""
        return self.browser.evaluate(expression, await_promise=await_promise)

    def wait_for(self, expression: str, timeout: float = 10.0) -> bool:
        """Poll ``expression`` until it is truthy; False after ``timeout`` seconds."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.evaluate(expression):
                return True
            time.sleep(0.1)
        return False

    def screenshot(self, path: Path, *, full_page: bool = True, scale: float = 0.5) -> Path:
        """Save a PNG of the page (the whole page by default, at ``scale``) to ``path``."""
        params: dict = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            width, height = self.evaluate(
                "[document.body.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": min(height, 40000), "scale": scale}
        data = self.browser.send("Page.captureScreenshot", params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


class Browser:
    """One headless Chromium with one tab; ``open`` loads a page and records what it did."""

    def __init__(self, *, allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost"), width: int = 1280):
        exe = find_chromium()
        if exe is None:
            raise FileNotFoundError(
                "no Chromium found: install Debian's `chromium` (apt-get install chromium)"
            )
        self.allowed_hosts = allowed_hosts
        # removed at close() even if a helper of Chromium's still writes into it (no error then)
        self._profile = tempfile.TemporaryDirectory(
            prefix="fromscratch-chromium-", ignore_cleanup_errors=True
        )
        # Chromium reads commands from its fd 3 and writes replies to its fd 4: our pipe ends are moved
        # above 4 first, so that placing them on 3 and 4 in the child cannot overwrite one another
        to_chrome_r, self._to_chrome = (_above_4(fd) for fd in os.pipe())
        self._from_chrome, from_chrome_w = (_above_4(fd) for fd in os.pipe())

        def child_fds() -> None:  # runs in the child before exec; subprocess then closes all but 3 and 4
            os.setsid()  # a process group of its own: close() stops its helper processes with it
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        args = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            "--no-first-run",
        ]
        args += [
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ]
        args += [
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
            "--disable-quic",
        ]
        args += [f"--user-data-dir={self._profile.name}", f"--window-size={width},1000", "about:blank"]
        self._proc = subprocess.Popen(
            args, pass_fds=(3, 4), preexec_fn=child_fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._ids = itertools.count(1)
        self._replies: dict[int, queue.Queue] = {}
        self._events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self._session = self.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, session=False
        )["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        self.send("Fetch.enable", {"patterns": [{"urlPattern": "*"}]})
        metrics = {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False}
        self.send("Emulation.setDeviceMetricsOverride", metrics)

    # --- the protocol ----------------------------------------------------------------------------
    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                if "id" in message and message["id"] in self._replies:
                    self._replies[message["id"]].put(message)
                elif "method" in message:
                    self._on_event(message)

    def send(
        self, method: str, params: dict | None = None, *, session: bool = True, timeout: float = 60.0
    ) -> dict:
        """Send one DevTools command and wait for its result (RuntimeError on a protocol error)."""
        ident = next(self._ids)
        self._replies[ident] = reply = queue.Queue()
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        with self._lock:
            os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        try:
            answer = reply.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} within {timeout} s") from None
        finally:
            del self._replies[ident]
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def _on_event(self, message: dict) -> None:
        method, params, page = message["method"], message.get("params", {}), self._page
        if method == "Fetch.requestPaused":  # answered here, on the reader thread, without waiting
            url = params["request"]["url"]
            local = (
                url.startswith(("file:", "data:", "blob:")) or urlparse(url).hostname in self.allowed_hosts
            )
            if not local and page is not None:
                page.external.append(url)
            command = "Fetch.continueRequest" if local else "Fetch.failRequest"
            extra = {} if local else {"errorReason": "BlockedByClient"}
            msg = {
                "id": next(self._ids),
                "method": command,
                "params": {"requestId": params["requestId"], **extra},
            }
            msg["sessionId"] = self._session
            with self._lock:
                os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
            return
        if page is None:
            return
        if method == "Runtime.consoleAPICalled" and params["type"] == "error":
            page.errors.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            page.errors.append(
                details.get("exception", {}).get("description") or details.get("text", "exception")
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            if "BlockedByClient" not in entry.get("text", "") and entry.get("source") != "network":
                page.errors.append(entry["text"])
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            page.failed.append(f"{params['response']['status']} {params['response']['url']}")
        elif method == "Network.loadingFailed" and params.get("blockedReason") is None:
            if params.get("errorText") != "net::ERR_BLOCKED_BY_CLIENT" and not params.get("canceled"):
                page.failed.append(f"{params.get('errorText')} ({params['requestId']})")
        elif method == "Page.loadEventFired":
            self._events.put("load")

    _page: Page | None = None

    # --- pages -----------------------------------------------------------------------------------
    def open(self, url: str, *, timeout: float = 30.0, settle: float = 0.3) -> Page:
        """Load ``url``, wait for its load event (and ``settle`` seconds more), return what it did."""
        page = self._page = Page(url, browser=self)
        while not self._events.empty():
            self._events.get_nowait()
        self.send("Page.navigate", {"url": url})
        try:
            self._events.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"{url} did not finish loading within {timeout} s") from None
        time.sleep(settle)
        return page

    def evaluate(self, expression: str, *, await_promise: bool = False):
        """Evaluate ``expression`` in the current page; its value, or RuntimeError if it threw."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}…: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def close(self) -> None:
        """Stop Chromium and its helper processes (renderer, GPU, network: its whole process group), wait
        until they are gone, then remove the profile they wrote into."""
        group = self._proc.pid  # the group's id: Chromium started it (setsid)
        self._signal_group(group, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=10)
        self._signal_group(group, signal.SIGKILL)  # what did not stop in 10 s
        self._proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self._signal_group(group, 0):  # a helper still alive?
            time.sleep(0.05)
        os.close(self._to_chrome)
        self._profile.cleanup()  # tolerant: nothing left should write there, and if it did, no error

    @staticmethod
    def _signal_group(group: int, sig: int) -> bool:
        """Send ``sig`` to every process of ``group``; False when none is left."""
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
