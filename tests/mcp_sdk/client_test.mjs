// `aisp mcp` as the official MCP TypeScript SDK client meets it (issue 23): connect, list the
// tools, start a host run and follow it to its results with progress, ask every read tool with
// good arguments and with bad ones, and a short fuzz of malformed JSON-RPC lines on a raw pipe.
// Usage: node client_test.mjs AISP_BINARY WORK_DIR      (exit 0 when every check held)
import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [aisp, work] = process.argv.slice(2);
if (!aisp || !work) {
  console.error("usage: node client_test.mjs AISP_BINARY WORK_DIR");
  process.exit(2);
}
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const db = join(work, "aisp.db");
const serverArgs = ["mcp", "--db", db, "--jobs-dir", join(work, "jobs")];

let failures = 0;
function check(condition, what) {
  console.log(`${condition ? "ok  " : "FAIL"} ${what}`);
  if (!condition) failures += 1;
}

const transport = new StdioClientTransport({ command: aisp, args: serverArgs, stderr: "ignore" });
const client = new Client({ name: "aisp-sdk-test", version: "1.0.0" });
await client.connect(transport);
check(client.getServerVersion()?.name === "aisp", "initialize: the server is aisp");

const { tools } = await client.listTools();
const names = new Set(tools.map((t) => t.name));
for (const name of ["list_targets", "list_runs", "show_run", "show_pair", "compare_runs", "target_history", "explain_check",
                    "hardware_ceilings", "start_run", "job_status", "wait_job", "cancel_job"]) {
  check(names.has(name), `tools/list has ${name}`);
}
// With an outputSchema the SDK checks every structuredContent below against it (callTool throws
// on a mismatch), so each good call is also a check of the schema.
check(tools.every((t) => t.outputSchema?.type === "object"), "every tool declares an object output schema");

// A host run as a job, followed with a progress token to its results.
const started = await client.callTool({ name: "start_run", arguments: { targets: "labs/host:transpose", max_time_s: 0.3 } });
check(!started.isError && started.structuredContent.state === "running", "start_run starts a job");
const progress = [];
const waited = await client.callTool(
  { name: "wait_job", arguments: { job: started.structuredContent.job, timeout_s: 300 } }, undefined,
  { onprogress: (p) => progress.push(p), timeout: 600000, resetTimeoutOnProgress: true });
check(progress.length > 0 && progress.at(-1).total === 1, `wait_job sent progress (${progress.length} notifications)`);
const status = waited.structuredContent;
check(status.state === "done", `the job ended done (${status.state}, exit ${status.exit_code})`);
check(status.results?.pairs?.[0]?.target === "labs/host:transpose", "its results name the pair");

// Every read tool, with arguments that hold; the run the job recorded is run 1.
const good = [
  ["list_targets", { group: "labs/host" }, (r) => r.targets.length > 0],
  ["list_runs", { target: "labs/host:transpose" }, (r) => r.runs.length === 1],
  ["show_run", { run: 1 }, (r) => r.pairs[0].target === "labs/host:transpose"],
  ["show_pair", { run: 1, target: "labs/host:transpose" }, (r) => r.variants.length >= 2],
  ["compare_runs", { run_a: 1, run_b: 1 }, (r) => Array.isArray(r.changes)],
  ["target_history", { target: "labs/host:transpose" }, (r) => r.runs.length === 1],
  ["explain_check", { query: "S2" }, (r) => r.rows[0].code === "S2"],
  ["hardware_ceilings", {}, (r) => Array.isArray(r.cards)],
  ["job_status", { job: started.structuredContent.job }, (r) => r.state === "done"],
];
for (const [name, args, holds] of good) {
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError && holds(result.structuredContent), `${name} answers`);
}

// Bad arguments are tool errors of one line; an unknown tool is a JSON-RPC error.
const bad = [
  ["show_run", {}], ["show_run", { run: "one" }], ["show_run", { run: 0 }], ["show_run", { run: 99 }],
  ["list_runs", { verbose: true }], ["start_run", { targets: "" }], ["start_run", { targets: 7 }],
  ["job_status", { job: 42 }], ["wait_job", { job: 1, timeout_s: -1 }], ["explain_check", { query: "no-such-check" }],
];
for (const [name, args] of bad) {
  const result = await client.callTool({ name, arguments: args });
  const text = result.content?.[0]?.text ?? "";
  check(result.isError === true && text.length > 0 && !text.includes("\n"), `${name} ${JSON.stringify(args)} is a one-line tool error`);
}
let unknown = null;
try {
  await client.callTool({ name: "launch_rockets", arguments: {} });
} catch (error) {
  unknown = error;
}
check(unknown !== null && unknown.code === -32602, "an unknown tool is JSON-RPC error -32602");
await client.close();

// A short fuzz on a raw pipe: every malformed line gets a JSON-RPC error or nothing, never a
// crash, and the server still answers ping at the end.
const raw = spawn(aisp, serverArgs, { stdio: ["pipe", "pipe", "ignore"] });
let output = "";
raw.stdout.on("data", (chunk) => { output += chunk; });
const valid = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_runs", arguments: {} } });
let seed = 12345;
const random = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const lines = ["{", "[]", "null", "42", "\"text\"", "{\"jsonrpc\":\"1.0\"}", "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":[]}"];
for (let i = 0; i < 200; i++) {  // cut, flip or splice the valid message
  const at = Math.floor(random() * valid.length);
  const kind = random();
  lines.push(kind < 0.33 ? valid.slice(0, at) : kind < 0.66 ? valid.slice(0, at) + String.fromCharCode(32 + Math.floor(random() * 90)) + valid.slice(at + 1)
                         : valid.slice(at) + valid.slice(0, at));
}
lines.push(JSON.stringify({ jsonrpc: "2.0", id: "last", method: "ping" }));
raw.stdin.write(lines.join("\n") + "\n");
raw.stdin.end();
const code = await new Promise((resolve) => raw.on("close", resolve));
const answers = output.split("\n").filter((l) => l.length > 0);
const parsed = answers.map((l) => { try { return JSON.parse(l); } catch { return null; } });
check(code === 0, `the fuzzed server ended cleanly (exit ${code})`);
check(parsed.every((m) => m !== null && m.jsonrpc === "2.0"), `all ${answers.length} answers to the fuzz are JSON-RPC`);
check(parsed.some((m) => m?.id === "last" && m.result !== undefined), "it still answered ping after the fuzz");

console.log(failures === 0 ? "mcp sdk test: every check held" : `mcp sdk test: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
