"""A scripted fake model server that the real harness CLIs can talk to.

It speaks just enough of three wire protocols, all streaming:

- Anthropic Messages (`POST /v1/messages`, plus `count_tokens`) for Claude Code;
- OpenAI Responses (`POST /v1/responses`) for Codex;
- OpenAI Chat Completions (`POST /v1/chat/completions`) for pi and omp.

What the "model" says is decided by `decide()` from the conversation it is sent. Prompts steer it with
small directives, so a test reads as what it asks for:

    "[[bash: ls -la]]"            -> call the shell tool with that command, then answer
    "[[write: notes.txt | hi]]"   -> call the Write/write tool, or a shell `printf` where there is none
    "[[agent: look {{bash: ls}}]]" -> call Claude's Agent/Task tool with the prompt "look [[bash: ls]]"
    "[[call: update_plan | {...}]]" -> call that tool (when the harness offers it) with these JSON arguments
    "[[long]]"                    -> a plain answer longer than 200 characters
    "[[tool: memory_search | {\"query\": \"x\"}]]" -> call the tool of that name, however the harness
                                     prefixes it (mcp__harnesslink__…, mcp__harnesslink_…, a Codex namespace)
    anything else                 -> a short plain answer

Once the tool's result comes back the model gives its final answer, which quotes the result. Every request is
kept in `server.requests` (path + parsed JSON body) so tests can assert what reached the model. Replies report
50 input tokens, or, with `server.usage_from_size = True`, a quarter of the request's size (a context that grows).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

DIRECTIVE = re.compile(r"\[\[(bash|write|agent|long|call|tool)(?::\s*(.*?))?\]\]", re.DOTALL)
NAMESPACE_SEPARATOR = "::"  # Codex offers MCP tools inside a namespace: "<namespace>::<tool>" here
SHELL_TOOL_NAMES = ("Bash", "bash", "shell", "shell_command", "exec_command", "local_shell")
AGENT_TOOL_NAMES = ("Agent", "Task")
WRITE_TOOL_NAMES = ("Write", "write")
LONG_ANSWER = (
    "Here is a longer explanation so that this answer is clearly more than two hundred characters. "
    "The fake model writes it whenever a prompt asks for [[long]]; real banking logic should treat it as "
    "a substantive answer worth remembering, unlike a short chat reply."
)


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    text: str = ""
    tool_call: ToolCall | None = None


@dataclass
class Conversation:
    """What `decide()` needs from a request, whatever the wire format."""

    last_user_text: str
    tool_result: str | None  # the newest message is a tool result: its text
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> JSON schema of its arguments


def decide(conversation: Conversation) -> Reply:
    """The script: one reply per request, chosen from the conversation."""
    if conversation.tool_result is not None:
        return Reply(text=f"Done. The tool said: {conversation.tool_result.strip()[:120]}")
    match = DIRECTIVE.search(conversation.last_user_text)
    if not match:
        prompt = " ".join(conversation.last_user_text.split())
        return Reply(text=f"OK: {prompt[-60:]}")
    kind, argument = match.group(1), (match.group(2) or "").strip()
    if kind == "long":
        return Reply(text=LONG_ANSWER)
    if kind == "call":
        name, _, arguments = argument.partition("|")
        if name.strip() not in conversation.tools:
            return Reply(text=f"No {name.strip()} tool here.")
        return Reply(tool_call=ToolCall(name.strip(), json.loads(arguments)))
    if kind == "tool":
        name, _, arguments = argument.partition("|")
        tool = find_tool(conversation.tools, name.strip())
        if tool is None:
            return Reply(text=f"No tool {name.strip()} among: {', '.join(sorted(conversation.tools))}")
        return Reply(tool_call=ToolCall(tool, json.loads(arguments or "{}")))
    if kind == "agent":
        agent_tool = _first_available(conversation.tools, AGENT_TOOL_NAMES)
        if agent_tool:
            # {{...}} inside the agent's prompt becomes the subagent's own [[...]] directive.
            prompt = argument.replace("{{", "[[").replace("}}", "]]")
            return Reply(tool_call=ToolCall(agent_tool, {
                "description": "Fake subagent task",
                "prompt": prompt,
                "subagent_type": "general-purpose",
                "run_in_background": False,  # finish inside the turn, so `-p` waits for it
            }))
        return Reply(text=f"No agent tool; I would have asked: {argument}")
    if kind == "write":
        path, _, content = argument.partition("|")
        write_tool = _first_available(conversation.tools, WRITE_TOOL_NAMES)
        if write_tool:
            properties = conversation.tools[write_tool].get("properties", {})
            path_key = "file_path" if "file_path" in properties else "path"
            return Reply(tool_call=ToolCall(write_tool, {path_key: path.strip(), "content": content.strip()}))
        argument = f"printf '%s\\n' {_shell_quote(content.strip())} > {_shell_quote(path.strip())} && echo written"
    shell_tool = _first_available(conversation.tools, SHELL_TOOL_NAMES)
    if shell_tool is None:
        return Reply(text=f"No shell tool; I would have run: {argument}")
    return Reply(tool_call=ToolCall(shell_tool, _shell_arguments(shell_tool, conversation.tools[shell_tool], argument)))


def find_tool(tools: dict[str, Any], name: str) -> str | None:
    """The offered tool that is `name` under the prefix a harness gives MCP tools (or none)."""
    for offered in sorted(tools):
        bare = offered.rsplit(NAMESPACE_SEPARATOR, 1)[-1]
        if name in (offered, bare) or offered.endswith(("__" + name, "_" + name)):
            return offered
    return None


def _first_available(tools: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in tools), None)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _shell_arguments(tool: str, schema: dict[str, Any], command: str) -> dict[str, Any]:
    """Fill the shell tool's arguments the way its schema wants them (argv list or one string)."""
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if "cmd" in properties:
        return {"cmd": command}
    if properties.get("command", {}).get("type") == "array":
        return {"command": ["bash", "-lc", command]}
    arguments: dict[str, Any] = {"command": command}
    if tool == "Bash":
        arguments["description"] = "Run the requested command"
    return arguments


# --- reading each wire format into a Conversation ---------------------------------------------------------------

def _newest_prompt(user_texts: list[str]) -> str:
    """The newest user text that is not wholly a tag-wrapped injection (<environment_context>, hook memory)."""
    for text in reversed(user_texts):
        stripped = text.strip()
        if stripped and not (stripped.startswith("<") and stripped.endswith(">")):
            return text
    return user_texts[-1] if user_texts else ""


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


def anthropic_conversation(body: dict[str, Any]) -> Conversation:
    tools = {tool["name"]: tool.get("input_schema", {}) for tool in body.get("tools") or [] if "name" in tool}
    # Claude Code may put a role "system" message after the user's, so look for the newest user message.
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    if isinstance(content, list):
        results = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        if results:
            return Conversation("", "\n".join(_texts(results[-1].get("content"))) or "(no output)", tools)
    return Conversation(_newest_prompt(_texts(content)), None, tools)


def responses_conversation(body: dict[str, Any]) -> Conversation:
    tools = {}
    for tool in body.get("tools") or []:
        name = tool.get("name") or tool.get("type")
        if tool.get("type") == "namespace":  # MCP servers' tools (Codex): one namespace per server
            for inner in tool.get("tools") or []:
                tools[f"{name}{NAMESPACE_SEPARATOR}{inner.get('name')}"] = inner.get("parameters", {})
        elif name:
            tools[name] = tool.get("parameters", {})
    items = body.get("input") or []
    if isinstance(items, str):
        return Conversation(items, None, tools)
    last = items[-1] if items else {}
    if last.get("type") in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        output = last.get("output")
        if isinstance(output, dict):
            output = output.get("content") or json.dumps(output)
        if isinstance(output, list):
            output = "\n".join(_texts(output))
        return Conversation("", str(output), tools)
    user_texts = [
        t for item in items if item.get("type", "message") == "message" and item.get("role") == "user"
        for t in _texts(item.get("content"))
    ]
    return Conversation(_newest_prompt(user_texts), None, tools)


def chat_conversation(body: dict[str, Any]) -> Conversation:
    tools = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") or {}
        if "name" in function:
            tools[function["name"]] = function.get("parameters", {})
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return Conversation("", "\n".join(_texts(last.get("content"))) or "(no output)", tools)
    user_texts = ["\n".join(_texts(m.get("content"))) for m in messages if m.get("role") == "user"]
    return Conversation(_newest_prompt(user_texts), None, tools)


# --- writing each wire format's stream ------------------------------------------------------------------------

_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):04d}"


def anthropic_events(reply: Reply, model: str, input_tokens: int = 50) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": input_tokens, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    yield "message_start", {"type": "message_start", "message": {
        "id": _next_id("msg"), "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}}
    if reply.tool_call:
        block = {"type": "tool_use", "id": _next_id("toolu"), "name": reply.tool_call.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.tool_call.arguments)}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    stop_reason = "tool_use" if reply.tool_call else "end_turn"
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 20}}
    yield "message_stop", {"type": "message_stop"}


def anthropic_message(reply: Reply, model: str, input_tokens: int = 50) -> dict[str, Any]:
    if reply.tool_call:
        content = [{"type": "tool_use", "id": _next_id("toolu"), "name": reply.tool_call.name,
                    "input": reply.tool_call.arguments}]
    else:
        content = [{"type": "text", "text": reply.text}]
    return {"id": _next_id("msg"), "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if reply.tool_call else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 20}}


def responses_events(reply: Reply, model: str, input_tokens: int = 50) -> Iterator[tuple[str, dict[str, Any]]]:
    response_id = _next_id("resp")
    yield "response.created", {"type": "response.created", "response": {"id": response_id, "model": model}}
    if reply.tool_call:
        namespace, _, name = reply.tool_call.name.rpartition(NAMESPACE_SEPARATOR)
        item = {"type": "function_call", "id": _next_id("fc"), "call_id": _next_id("call"),
                "name": name, "arguments": json.dumps(reply.tool_call.arguments)}
        if namespace:
            item["namespace"] = namespace
    else:
        item = {"type": "message", "role": "assistant", "id": _next_id("msg"),
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                              "item": {**item, "content": []}}
        yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                              "output_index": 0, "content_index": 0, "delta": reply.text}
    yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    yield "response.completed", {"type": "response.completed", "response": {
        "id": response_id, "model": model, "status": "completed", "output": [item],
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input_tokens + 20}}}


def chat_chunks(reply: Reply, model: str, input_tokens: int = 50) -> Iterator[dict[str, Any]]:
    chunk_id, created = _next_id("chatcmpl"), int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {"id": chunk_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    if reply.tool_call:
        yield chunk({"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": _next_id("call"), "type": "function",
            "function": {"name": reply.tool_call.name, "arguments": json.dumps(reply.tool_call.arguments)}}]})
        finish = "tool_calls"
    else:
        yield chunk({"role": "assistant", "content": reply.text})
        finish = "stop"
    yield chunk({}, finish, usage={"prompt_tokens": input_tokens, "completion_tokens": 20,
                                   "total_tokens": input_tokens + 20})


def chat_completion(reply: Reply, model: str, input_tokens: int = 50) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_call:
        message["tool_calls"] = [{"id": _next_id("call"), "type": "function", "function": {
            "name": reply.tool_call.name, "arguments": json.dumps(reply.tool_call.arguments)}}]
    return {"id": _next_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_call else "stop"}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": 20, "total_tokens": input_tokens + 20}}


# --- the server -------------------------------------------------------------------------------------------------

@dataclass
class LoggedRequest:
    method: str
    path: str
    body: Any
    reply: Reply | None = None


class FakeModelServer:
    """`with FakeModelServer() as server:` serves on 127.0.0.1:<free port> until the block ends."""

    def __init__(self, log_path: str | None = None) -> None:
        self.requests: list[LoggedRequest] = []
        self.log_path = log_path
        self.usage_from_size = False  # report a quarter of each request's size as its input tokens
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._http.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def record(self, entry: LoggedRequest) -> None:
        with self._lock:
            self.requests.append(entry)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as log:
                    reply = entry.reply and {"text": entry.reply.text, "tool_call": entry.reply.tool_call and {
                        "name": entry.reply.tool_call.name, "arguments": entry.reply.tool_call.arguments}}
                    log.write(json.dumps({"method": entry.method, "path": entry.path, "body": entry.body,
                                          "reply": reply}) + "\n")

    def model_requests(self) -> list[LoggedRequest]:
        """Only the requests that asked the model for a reply."""
        return [r for r in self.requests if r.reply is not None]

    def saw_tool_result(self, containing: str = "") -> bool:
        """Did some request carry a tool result back to the model (whose text contains `containing`)?"""
        for request in self.model_requests():
            conversation = _conversation_for(request.path, request.body)
            if conversation and conversation.tool_result is not None and containing in conversation.tool_result:
                return True
        return False

    def bodies_text(self) -> str:
        return "\n".join(json.dumps(r.body) for r in self.model_requests())


def tool_result_of(request: LoggedRequest) -> str | None:
    """The tool result this request carries back to the model, if its newest message is one."""
    conversation = _conversation_for(request.path, request.body)
    return conversation.tool_result if conversation else None


def _conversation_for(path: str, body: Any) -> Conversation | None:
    if not isinstance(body, dict):
        return None
    if path.endswith("/messages"):
        return anthropic_conversation(body)
    if path.endswith("/responses"):
        return responses_conversation(body)
    if path.endswith("/chat/completions"):
        return chat_conversation(body)
    return None


def _handler_for(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            server.record(LoggedRequest("GET", self.path, None))
            if self.path.rstrip("/").endswith("/models"):
                self._json({"object": "list", "data": [], "models": []})
            else:
                self._json({})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            path = self.path.split("?", 1)[0]
            if path.endswith("/count_tokens"):
                server.record(LoggedRequest("POST", path, body))
                return self._json({"input_tokens": 100})
            conversation = _conversation_for(path, body)
            if conversation is None:
                server.record(LoggedRequest("POST", path, body))
                return self._json({})
            reply = decide(conversation)
            server.record(LoggedRequest("POST", path, body, reply))
            model = str(body.get("model", "fake-model"))
            tokens = max(50, len(raw) // 4) if server.usage_from_size else 50
            stream = body.get("stream", path.endswith("/responses"))
            if path.endswith("/messages"):
                if not stream:
                    return self._json(anthropic_message(reply, model, tokens))
                return self._sse((f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in
                                  anthropic_events(reply, model, tokens)))
            if path.endswith("/responses"):
                return self._sse((f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in
                                  responses_events(reply, model, tokens)))
            if not stream:
                return self._json(chat_completion(reply, model, tokens))
            return self._sse(itertools.chain((f"data: {json.dumps(c)}\n\n" for c in chat_chunks(reply, model, tokens)),
                                             ["data: [DONE]\n\n"]))

        def _json(self, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: Iterator[str]) -> None:
            data = "".join(events).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
