// harnesslink-extension v1: written by HarnessLink's install.py; uninstall.py removes it.
// Feeds this agent's sessions to HarnessLink's shared memory and hands what it recalls to the model.
// It calls the hook executable with JSON on stdin and reads one JSON object back:
// {"additionalContext": "..."}. It never throws: a failing hook costs context, never a session.
import { spawn, spawnSync } from "node:child_process";

const HOOK = __HOOK_EXE__;
const HARNESS = __HARNESS__;
const TIMEOUT_MS: { [event: string]: number } = {
  "session-start": 30000,
  "user-prompt-submit": 30000,
  stop: 60000,
  "pre-compact": 60000,
};

function sessionFact(ctx: any, getter: string): string {
  try {
    const value = ctx?.sessionManager?.[getter]?.();
    return typeof value === "string" ? value : "";
  } catch {
    return "";
  }
}

function payloadOf(ctx: any, extra: { [key: string]: string } = {}) {
  const cwd = typeof ctx?.cwd === "string" && ctx.cwd ? ctx.cwd : sessionFact(ctx, "getCwd") || process.cwd();
  return {
    session_id: sessionFact(ctx, "getSessionId"),
    transcript_path: sessionFact(ctx, "getSessionFile"),
    cwd,
    ...extra,
  };
}

function run(event: string, payload: object): string {
  try {
    const result = spawnSync(HOOK, [event, "--harness", HARNESS], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: TIMEOUT_MS[event],
      stdio: ["pipe", "pipe", "ignore"],
      windowsHide: true,
    });
    if (result.error || result.status !== 0 || !result.stdout) return "";
    const answer = JSON.parse(String(result.stdout).trim());
    return typeof answer?.additionalContext === "string" ? answer.additionalContext : "";
  } catch {
    return "";
  }
}

// --- memory tools: the same tools as `harnesslink mcp`, registered natively --------------------------------
// pi has no MCP, and omp would hide MCP tools behind its xd:// device; here they are top-level tools
// (omp: loadMode "essential"). Each call runs `harnesslink mcp-call <tool>` with
// {"arguments", "cwd", "session_id"} on stdin and reads {"text", "isError"} back.
const CLI = __CLI__;
const TOOLS: any[] = __TOOLS__;
const TOOL_TIMEOUT_MS = 60000;

function callTool(name: string, params: any, ctx: any, signal: any): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let child: any;
    try {
      child = spawn(CLI, ["mcp-call", name, "--harness", HARNESS], {
        stdio: ["pipe", "pipe", "ignore"],
        timeout: TOOL_TIMEOUT_MS,
        windowsHide: true,
        ...(signal ? { signal } : {}),
      });
    } catch (error: any) {
      reject(new Error(`HarnessLink ${name} could not start: ${error?.message ?? error}`));
      return;
    }
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    child.on("error", (error: any) => reject(new Error(`HarnessLink ${name} failed: ${error?.message ?? error}`)));
    child.on("close", () => {
      let answer: any;
      try {
        answer = JSON.parse(out.trim());
      } catch {
        reject(new Error(`HarnessLink ${name} gave no answer`));
        return;
      }
      if (answer?.isError) reject(new Error(String(answer.text)));
      else resolve(String(answer?.text ?? ""));
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(JSON.stringify({ ...payloadOf(ctx), arguments: params ?? {} }));
  });
}

function registerMemoryTools(pi: any) {
  for (const tool of TOOLS) {
    try {
      pi.registerTool({
        name: tool.name,
        label: tool.label,
        description: tool.description,
        parameters: tool.parameters,
        loadMode: "essential",
        approval: tool.readOnly ? "read" : "write",
        async execute(_toolCallId: string, params: any, signal: any, _onUpdate: any, ctx: any) {
          const text = await callTool(tool.name, params, ctx, signal);
          return { content: [{ type: "text", text }], details: { harnesslink: tool.name } };
        },
      });
    } catch {
      // an agent without registerTool, or another extension's tool of the same name: the hooks still work
    }
  }
}
// --- end of memory tools ---------------------------------------------------------------------------------------

export default function harnesslink(pi: any) {
  registerMemoryTools(pi);
  let brief = ""; // the session-start context: added to the system prompt of every run
  let briefInMessage = false; // when the agent gives no system prompt, the brief goes once into a message
  let stopped = true; // one stop per agent run, whichever end event comes first

  const on = (event: string, handler: (event: any, ctx: any) => any) => {
    try {
      pi.on(event, async (event: any, ctx: any) => {
        try {
          return await handler(event, ctx);
        } catch {
          return undefined;
        }
      });
    } catch {
      // an agent version without this event
    }
  };

  const start = (source: string, ctx: any) => {
    brief = run("session-start", payloadOf(ctx, { source }));
    briefInMessage = false;
  };

  on("session_start", (event, ctx) => start(event?.reason === "resume" ? "resume" : "startup", ctx));
  on("session_switch", (event, ctx) => start(event?.reason === "resume" ? "resume" : "startup", ctx));
  on("session_fork", (_event, ctx) => start("startup", ctx));
  on("session_branch", (_event, ctx) => start("startup", ctx));
  on("session_compact", (_event, ctx) => start("compact", ctx));

  on("before_agent_start", (event, ctx) => {
    stopped = false;
    const matches = run("user-prompt-submit", payloadOf(ctx, { prompt: String(event?.prompt ?? "") }));
    const result: any = {};
    let content = matches;
    if (brief) {
      const system = event?.systemPrompt;
      if (Array.isArray(system)) result.systemPrompt = [...system, brief]; // omp: string[]
      else if (typeof system === "string") result.systemPrompt = system + "\n\n" + brief; // pi: string
      else if (!briefInMessage) {
        content = [brief, matches].filter(Boolean).join("\n\n");
        briefInMessage = true;
      }
    }
    if (content) result.message = { customType: "harnesslink", content, display: false };
    return Object.keys(result).length ? result : undefined;
  });

  const stop = (event: any, ctx: any) => {
    if (stopped || event?.willContinue) return undefined;
    stopped = true;
    run("stop", payloadOf(ctx));
    return undefined;
  };
  on("agent_end", stop);
  if (HARNESS === "omp") on("session_stop", stop);

  on("session_before_compact", (_event, ctx) => {
    run("pre-compact", payloadOf(ctx));
    return undefined; // anything else would cancel or replace the compaction
  });
}
