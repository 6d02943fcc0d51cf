// ctxmode for the OpenClaw gateway: a plugin that forwards OpenClaw's typed hooks to
// `ctxmode hook openclaw <event>` and applies the answers (contract:
// ctxmode/platforms/jsplugin.py). The ctx_* tools come from the `ctxmode` MCP server in
// mcp.servers; OpenClaw defers them behind tool_search / tool_call.
//
// Install: `ctxmode setup openclaw --global` writes this file as <state dir>/ctxmode/ctxmode.js
// (the file name is the plugin id) with shim_common.js written in, lists it in
// plugins.load.paths and enables it with hooks.allowConversationAccess (before_prompt_build
// needs it). CTXMODE_BIN overrides the ctxmode executable. Anything going wrong lets the call
// through: a hook that fails or answers nothing leaves OpenClaw as it was.
import { spawn } from "node:child_process";

const PLATFORM = "openclaw";
const CTXMODE = process.env.CTXMODE_BIN || "ctxmode";
const HOOK_TIMEOUT_MS = 10000; // OpenClaw blocks a tool call whose hook takes 15 s

/* ctxmode: shim_common.js */

// The Tool Search wrappers: the tool they reach gets its own before/after_tool_call.
const WRAPPERS = new Set(["tool_call", "tool_search", "tool_describe", "tool_search_code"]);

const sessionOf = (ctx) => (ctx && (ctx.sessionId || ctx.sessionKey)) || "";

export default {
  id: "ctxmode",
  name: "ctxmode",
  description: "Keeps raw tool output out of the context window (ctxmode hooks).",
  register(api) {
    // Session id -> what its start put in: the routing block and a snapshot. OpenClaw
    // rebuilds the system prompt for every turn and keeps nothing a hook added, so it goes
    // into every prompt of the session this process builds.
    const system = new Map();
    const base = (ctx) => ({
      session_id: sessionOf(ctx),
      cwd: (ctx && ctx.workspaceDir) || process.cwd(),
    });
    const start = async (ctx, source) => {
      system.set(sessionOf(ctx), contextOf(await hook("session_start", { ...base(ctx), source })));
    };

    api.on("before_prompt_build", async (event, ctx) => {
      if (!system.has(sessionOf(ctx))) {
        const history = Array.isArray(event?.messages) && event.messages.length > 0;
        await start(ctx, history ? "resume" : "startup");
      }
      const prompt =
        typeof event?.currentUserMessage === "string" ? event.currentUserMessage : event?.prompt;
      const answer = await hook("before_prompt_build", { ...base(ctx), prompt: prompt || "" });
      const result = {};
      const text = system.get(sessionOf(ctx));
      if (text) result.appendSystemContext = text;
      if (contextOf(answer)) result.prependContext = contextOf(answer);
      return Object.keys(result).length ? result : undefined;
    });

    const call = (event, ctx) => ({
      ...base(ctx),
      tool_call_id: event?.toolCallId,
      tool_name: event?.toolName,
      tool_input: (event && event.params) || {},
    });

    api.on("before_tool_call", async (event, ctx) => {
      if (WRAPPERS.has(event?.toolName)) return undefined;
      const params = (event && event.params) || {};
      const answer = await hook("before_tool_call", call(event, ctx));
      if (!answer) return undefined;
      const reason = answer.reason || "Blocked by ctxmode.";
      if (answer.decision === "deny") return { block: true, blockReason: reason };
      if (answer.decision === "ask") {
        return { requireApproval: { title: "ctxmode", description: reason, severity: "warning" } };
      }
      if (answer.decision === "modify" && answer.updatedInput) {
        return { params: { ...params, ...answer.updatedInput } };
      }
      return undefined;
    });

    api.on("after_tool_call", async (event, ctx) => {
      if (WRAPPERS.has(event?.toolName)) return;
      const result = event?.result;
      const details = (result && result.details) || {};
      const exit = details.exitCode;
      await hook("after_tool_call", {
        ...call(event, ctx),
        tool_response: event?.error || textOf(result && result.content),
        is_error: Boolean(event?.error) || (typeof exit === "number" && exit !== 0),
      });
    });

    api.on("before_compaction", async (_event, ctx) => {
      await hook("before_compaction", base(ctx));
    });

    // After a compaction the session's next prompts get the routing block and its snapshot.
    api.on("after_compaction", async (event, ctx) => {
      const previous = event && event.previousSessionId;
      const at = previous ? { ...ctx, sessionId: previous } : ctx;
      const text = contextOf(await hook("after_compaction", base(at)));
      system.set(sessionOf(ctx), text);
    });
  },
};
