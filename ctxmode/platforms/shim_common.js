// What ctxmode's JavaScript shims share (pi_extension.js, openclaw_plugin.js): `ctxmode setup`
// writes it into each shim in place of the comment line that names this file. The shim
// defines PLATFORM, CTXMODE (the executable) and HOOK_TIMEOUT_MS.

// One `ctxmode hook` process: the payload on stdin, one JSON object back (null: carry on).
function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(CTXMODE, ["hook", PLATFORM, event], {
        stdio: ["pipe", "pipe", "ignore"],
        timeout: HOOK_TIMEOUT_MS,
      });
    } catch {
      resolve(null);
      return;
    }
    child.on("error", () => resolve(null));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text) => {
      out += text;
    });
    child.on("close", () => {
      try {
        const answer = JSON.parse(out);
        resolve(answer && typeof answer === "object" ? answer : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
  });
}

const contextOf = (answer) =>
  answer && answer.decision === "context" && typeof answer.additionalContext === "string"
    ? answer.additionalContext
    : "";

const textOf = (content) =>
  (Array.isArray(content) ? content : [])
    .filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
