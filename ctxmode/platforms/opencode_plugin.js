// ctxmode for OpenCode (and Kilo Code): a plugin that forwards OpenCode's plugin hooks to
// `ctxmode hook <PLATFORM> <event>` and applies the answer.
//
// Install: `ctxmode setup opencode` puts this file in .opencode/plugins/ (or
// ~/.config/opencode/plugins/); `ctxmode setup kilo` in .kilo/plugins/ (~/.config/kilo/plugins/).
// CTXMODE_BIN overrides the ctxmode executable (default: `ctxmode` on PATH). The module has
// exactly one export: OpenCode initialises every exported function as a plugin.
//
// Contract (ctxmode/platforms/opencode.py): stdin is one JSON object
// {hook_event_name, session_id, cwd, ...}; stdout is one JSON object
// {"decision": "allow" | "deny" | "modify" | "context", reason, updatedInput, additionalContext}.
// Anything going wrong (ctxmode missing, a timeout, unreadable output) lets the call through.
import { spawn } from "node:child_process";

// The platform whose hooks this shim runs: OpenCode, or a fork with the same plugin API
// (Kilo Code; setup writes its name here).
const PLATFORM = "opencode";
const TIMEOUT_MS = 10000;

function ask(event, payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(process.env.CTXMODE_BIN || "ctxmode", ["hook", PLATFORM, event], {
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    const timer = setTimeout(() => {
      child.kill();
      resolve(null);
    }, TIMEOUT_MS);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on("close", () => {
      clearTimeout(timer);
      try {
        const answer = JSON.parse(out);
        resolve(answer && typeof answer === "object" ? answer : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function contextOf(answer) {
  return answer && answer.decision === "context" && typeof answer.additionalContext === "string"
    ? answer.additionalContext
    : "";
}

export const CtxmodePlugin = async ({ directory, worktree } = {}) => {
  const cwd = directory || worktree || process.cwd();
  const routing = new Map(); // sessionID -> session-start text (asked once per session)
  const base = (hook, sessionID) => ({ hook_event_name: hook, session_id: sessionID || "", cwd });

  return {
    // pretooluse: deny throws (OpenCode blocks the call and shows the reason); modify
    // rewrites the arguments in place.
    "tool.execute.before": async (input, output) => {
      const answer = await ask("pretooluse", {
        ...base("tool.execute.before", input.sessionID),
        call_id: input.callID,
        tool_name: input.tool,
        tool_input: output.args || {},
      });
      if (!answer) return;
      if (answer.decision === "deny") {
        throw new Error(answer.reason || "Blocked by ctxmode.");
      }
      if (answer.decision === "modify" && answer.updatedInput && output.args) {
        Object.assign(output.args, answer.updatedInput);
      }
    },

    // posttooluse: session capture. Context is appended to the result, except for bash,
    // whose rewritten output OpenCode's TUI misrenders (OpenCode #13575).
    "tool.execute.after": async (input, output) => {
      const answer = await ask("posttooluse", {
        ...base("tool.execute.after", input.sessionID),
        call_id: input.callID,
        tool_name: input.tool,
        tool_input: input.args || {},
        output: output.output,
        metadata: output.metadata,
      });
      const text = contextOf(answer);
      if (text && input.tool !== "bash" && typeof output.output === "string") {
        output.output += `\n\n${text}`;
      }
    },

    // precompact: the resume snapshot goes into the compaction context.
    "experimental.session.compacting": async (input, output) => {
      const answer = await ask("precompact", base("experimental.session.compacting", input.sessionID));
      const text = contextOf(answer);
      if (text && Array.isArray(output.context)) output.context.push(text);
    },

    // sessionstart: OpenCode has no session-start hook, so the routing block is asked for
    // once per session and spliced into every system prompt at index 1 (index 0 is the
    // host's cached header). Requests of no session (agent generation) and Kilo's title
    // agent (session "title-<id>") get nothing.
    "experimental.chat.system.transform": async (input, output) => {
      const id = (input && input.sessionID) || "";
      if (!id || id.startsWith("title-")) return;
      if (!routing.has(id)) {
        const answer = await ask("sessionstart", {
          ...base("experimental.chat.system.transform", id),
          source: "startup",
        });
        routing.set(id, contextOf(answer));
      }
      const text = routing.get(id);
      if (!text || !Array.isArray(output.system) || output.system.some((s) => s.includes(text))) {
        return;
      }
      output.system.splice(Math.min(1, output.system.length), 0, text);
    },

    // userpromptsubmit: prompt capture.
    "chat.message": async (input, output) => {
      const prompt = (output.parts || [])
        .filter((part) => part && part.type === "text" && !part.synthetic && part.text)
        .map((part) => part.text)
        .join("\n");
      if (prompt) await ask("userpromptsubmit", { ...base("chat.message", input.sessionID), prompt });
    },
  };
};
