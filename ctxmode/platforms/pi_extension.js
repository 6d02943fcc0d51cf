// ctxmode for Pi and Oh My Pi: an extension that forwards the host's events to
// `ctxmode hook <platform> <event>` and applies the answers (contract:
// ctxmode/platforms/jsplugin.py). On Pi, which has no MCP client, it also runs
// `ctxmode serve` and registers the server's tools; Oh My Pi reads the server from its
// mcp.json.
//
// Install: `ctxmode setup pi` puts this file in .pi/extensions/ (Oh My Pi: .omp/extensions/)
// with PLATFORM set and shim_common.js (the `ctxmode hook` call) written in. CTXMODE_BIN
// overrides the ctxmode executable. Anything going wrong (ctxmode missing, a timeout,
// unreadable output) lets the host carry on as if the extension were not there.
import { spawn } from "node:child_process";

const PLATFORM = "pi";
const CTXMODE = process.env.CTXMODE_BIN || "ctxmode";
const BRIDGE = PLATFORM === "pi";
const HOOK_TIMEOUT_MS = 30000;
const START_TIMEOUT_MS = 60000;
const MESSAGE_TYPE = "ctxmode";

/* ctxmode: shim_common.js */

// `ctxmode serve` over stdio (newline-delimited JSON-RPC), for Pi.
class Server {
  constructor(cwd) {
    this.pending = new Map();
    this.nextId = 1;
    this.buffer = "";
    this.alive = true;
    this.child = spawn(CTXMODE, ["serve"], { cwd, stdio: ["pipe", "pipe", "ignore"] });
    const stop = (why) => {
      this.alive = false;
      for (const { reject } of this.pending.values()) reject(new Error(why));
      this.pending.clear();
    };
    this.child.on("error", (err) => stop(`ctxmode serve: ${err.message}`));
    this.child.on("exit", (code) => stop(`ctxmode serve exited (${code})`));
    this.child.stdin.on("error", () => {});
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (text) => {
      this.buffer += text;
      let end;
      while ((end = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, end).trim();
        this.buffer = this.buffer.slice(end + 1);
        if (line) this.receive(line);
      }
    });
  }

  receive(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg && msg.method && msg.id !== undefined) {
      // A request from the server (ping, roots): answer so it never waits.
      const reply = msg.method === "ping"
        ? { result: {} }
        : { error: { code: -32601, message: "not supported by the Pi bridge" } };
      this.send({ jsonrpc: "2.0", id: msg.id, ...reply });
      return;
    }
    const waiting = msg && this.pending.get(msg.id);
    if (!waiting) return;
    this.pending.delete(msg.id);
    if (msg.error) waiting.reject(new Error(msg.error.message || "MCP error"));
    else waiting.resolve(msg.result || {});
  }

  send(msg) {
    if (this.alive) this.child.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  request(method, params, { timeoutMs = 0, signal } = {}) {
    if (!this.alive) return Promise.reject(new Error("ctxmode serve is not running"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const done = (fn) => (value) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        fn(value);
      };
      const onAbort = () => {
        this.pending.delete(id);
        this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
        done(reject)(new Error("cancelled"));
      };
      const timer = timeoutMs
        ? setTimeout(() => {
            this.pending.delete(id);
            done(reject)(new Error(`${method}: no answer in ${timeoutMs} ms`));
          }, timeoutMs)
        : undefined;
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, { resolve: done(resolve), reject: done(reject) });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  async open() {
    await this.request(
      "initialize",
      {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: `${PLATFORM}-ctxmode`, version: "1" },
      },
      { timeoutMs: START_TIMEOUT_MS },
    );
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const listed = await this.request("tools/list", {}, { timeoutMs: START_TIMEOUT_MS });
    return Array.isArray(listed.tools) ? listed.tools : [];
  }

  close() {
    if (!this.alive) return;
    this.alive = false;
    this.child.stdin.end();
    setTimeout(() => this.child.kill("SIGKILL"), 3000).unref();
  }
}

export default function ctxmode(pi) {
  let server = null; // Pi: the running `ctxmode serve`
  let starting = null; // Pi: the start in progress (or done), a promise of true/false
  const registered = new Set();
  let startContext = ""; // the session start's context, for the next prompt
  const notes = new Map(); // toolCallId -> pre-tool context, appended to the result

  const base = (ctx) => {
    let sessionId = "";
    try {
      sessionId = ctx.sessionManager.getSessionId() || "";
    } catch {}
    return { session_id: sessionId, cwd: (ctx && ctx.cwd) || process.cwd() };
  };

  const register = (tool) => {
    if (registered.has(tool.name)) return;
    registered.add(tool.name);
    pi.registerTool({
      name: tool.name,
      label: tool.name,
      description: tool.description || "",
      parameters: tool.inputSchema || { type: "object", properties: {} },
      async execute(_toolCallId, params, signal) {
        if (!server || !server.alive) await startServer(process.cwd());
        const result = await server.request(
          "tools/call",
          { name: tool.name, arguments: params || {} },
          { signal },
        );
        const content = (result.content || [])
          .filter((part) => part && (part.type === "text" || part.type === "image"))
          .map((part) =>
            part.type === "text"
              ? { type: "text", text: String(part.text ?? "") }
              : { type: "image", data: part.data, mimeType: part.mimeType },
          );
        if (result.isError) throw new Error(textOf(content) || `${tool.name} failed`);
        return { content, details: result.structuredContent || {} };
      },
    });
  };

  // Pi: start `ctxmode serve` and register its tools; true when they are there.
  const startServer = (cwd) => {
    if (server && server.alive && starting) return starting;
    server = new Server(cwd);
    const mine = server;
    starting = mine.open().then(
      (tools) => {
        tools.forEach(register);
        return true;
      },
      () => {
        mine.close();
        return false;
      },
    );
    return starting;
  };

  const stopServer = () => {
    if (server) server.close();
    server = null;
    starting = null;
  };

  // A session start is told to ctxmode with the first prompt after it (the tools are up
  // by then), unless a compaction comes first and says more.
  let pendingStart = "";
  const sessionStart = (source) => {
    pendingStart = source;
  };

  pi.on("session_start", async (event, ctx) => {
    let source = event?.reason || "startup";
    if (source === "fork") source = "resume";
    if (source === "startup" || source === "new") {
      let history = false;
      try {
        history = ctx.sessionManager.getEntries().some((e) => e.type === "message");
      } catch {}
      source = history ? "resume" : "startup";
    }
    sessionStart(source);
  });

  // Oh My Pi: /new, /resume and /fork switch sessions in the same runtime.
  pi.on("session_switch", async (event, ctx) => {
    sessionStart(event?.reason === "new" ? "startup" : "resume");
  });

  pi.on("before_agent_start", async (event, ctx) => {
    let tools = true;
    if (BRIDGE) tools = await startServer((ctx && ctx.cwd) || process.cwd());
    if (pendingStart) {
      const source = pendingStart;
      pendingStart = "";
      startContext = contextOf(await hook("session_start", { ...base(ctx), source }));
    }
    const answer = await hook("before_agent_start", { ...base(ctx), prompt: event?.prompt || "" });
    // Without the tools, the routing block would name tools the model does not have.
    const parts = [tools ? startContext : "", contextOf(answer)].filter(Boolean);
    startContext = "";
    if (!parts.length) return undefined;
    return { message: { customType: MESSAGE_TYPE, content: parts.join("\n\n"), display: false } };
  });

  const call = (event, ctx) => ({
    ...base(ctx),
    tool_call_id: event.toolCallId,
    tool_name: event.toolName,
    tool_input: event.input || {},
  });

  pi.on("tool_call", async (event, ctx) => {
    const answer = await hook("tool_call", call(event, ctx));
    if (!answer) return undefined;
    if (answer.decision === "deny") return { block: true, reason: answer.reason || "Blocked by ctxmode." };
    if (answer.decision === "ask") {
      const reason = answer.reason || "ctxmode asks before this call.";
      let ok = false;
      if (ctx && ctx.hasUI) {
        try {
          ok = await ctx.ui.confirm("ctxmode", reason);
        } catch {}
      }
      return ok ? undefined : { block: true, reason };
    }
    if (answer.decision === "modify" && answer.updatedInput && event.input) {
      Object.assign(event.input, answer.updatedInput); // Pi runs the mutated input
    }
    const note = typeof answer.additionalContext === "string" ? answer.additionalContext : "";
    if (note) notes.set(event.toolCallId, note);
    // Oh My Pi runs a returned `input` instead of the original arguments.
    return answer.decision === "modify" ? { input: { ...event.input } } : undefined;
  });

  pi.on("tool_result", async (event, ctx) => {
    const answer = await hook("tool_result", {
      ...call(event, ctx),
      tool_response: textOf(event.content),
      is_error: Boolean(event.isError),
    });
    const extra = [notes.get(event.toolCallId), contextOf(answer)].filter(Boolean);
    notes.delete(event.toolCallId);
    if (!extra.length) return undefined;
    const content = Array.isArray(event.content) ? event.content : [];
    return { content: [...content, { type: "text", text: extra.join("\n\n") }] };
  });

  pi.on("session_before_compact", async (_event, ctx) => {
    await hook("session_before_compact", base(ctx));
    return undefined; // never cancels or replaces the host's own summary
  });

  // After a compaction: the routing block and the snapshot go in at once.
  pi.on("session_compact", async (_event, ctx) => {
    const text = contextOf(await hook("session_compact", base(ctx)));
    pendingStart = ""; // a session start not yet told: the compaction says more
    startContext = "";
    if (!text) return;
    try {
      pi.sendMessage({ customType: MESSAGE_TYPE, content: text, display: false });
    } catch {
      startContext = text;
    }
  });

  pi.on("session_shutdown", async () => {
    stopServer();
  });
  process.once("exit", stopServer);
}
