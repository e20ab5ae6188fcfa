// The inspector in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against a real `retold serve` (crates/http/tests/it/inspector.rs starts it and passes
// RETOLD_URL, RETOLD_ADMIN_KEY, ARTIFACTS and CHROMIUM). Seeds data through the API, then
// signs in, browses a scope, opens a record's history, runs a search and opens its trace,
// resolves a conflict and sees its audit event, and checks that no page asked for anything
// off the host. Screenshots go to ARTIFACTS. Exits non-zero on the first failed check.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

const base = process.env.RETOLD_URL;
const adminKey = process.env.RETOLD_ADMIN_KEY;
const artifacts = process.env.ARTIFACTS;
assert.ok(base && adminKey && artifacts, "RETOLD_URL, RETOLD_ADMIN_KEY and ARTIFACTS must be set");
fs.mkdirSync(artifacts, { recursive: true });

async function call(method, route, body, key = adminKey) {
  const response = await fetch(base + route, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${route}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// ---- Seed ----------------------------------------------------------------------------------
const host = (await call("POST", "/v1/admin/host-keys", { name: "inspector-test" })).key;
await call("POST", "/v1/admin/grants", { agent_id: "assistant", scope: "user:jo", can_read: true, can_write: true });
const jo = { agent_id: "assistant", user_id: "jo" };
const fact = { subject: { name: "Jo", kind: "person" }, attribute: "preferred_editor" };
const write = (body) => call("POST", "/v1/memory/write", { principal: jo, type: "semantic", scope: "user:jo", ...body }, host);
const helix = await write({ content: "Jo's preferred editor is Helix.", source_kind: "system", ...fact });
const zed = await write({ content: "Jo's preferred editor is Zed now.", source_kind: "system", ...fact });
assert.equal(zed.outcome, "superseding", JSON.stringify(zed));
const vim = await write({ content: "Jo's preferred editor is Vim, it seems.", source_kind: "agent_inference", ...fact });
assert.equal(vim.outcome, "conflicting", JSON.stringify(vim));
// A second conflict, resolved from the review queue page.
const shellFact = { subject: { name: "Jo", kind: "person" }, attribute: "login_shell" };
await write({ content: "Jo's login shell is bash.", source_kind: "system", ...shellFact });
const fish = await write({ content: "Jo's login shell is fish, apparently.", source_kind: "agent_inference", ...shellFact });
assert.equal(fish.outcome, "conflicting", JSON.stringify(fish));
for (let n = 1; n <= 50; n++) {
  await write({ content: `Build note ${n}: the cache of job ${n} lives on disk ${n % 7}.`, source_kind: "system" });
}
const session = await call("POST", "/v1/sessions", { principal: jo }, host);
const inSession = { ...jo, session_id: session.id };
await call("POST", `/v1/sessions/${session.id}/turns`, { principal: inSession, role: "user", content: "Which editor do I use these days?" }, host);
await call("POST", `/v1/sessions/${session.id}/turns`, { principal: inSession, role: "assistant", content: "Zed, since you switched from Helix." }, host);
const decided = await call("POST", `/v1/sessions/${session.id}/decisions`,
  { principal: inSession, turn: "Which editor do I use these days?", draft: "Zed, since you switched from Helix." }, host);
await call("POST", `/v1/sessions/${session.id}/end`, { principal: inSession }, host);
// A session whose extraction runs (the server's provider is the fake one; EXTRACTION_TURNS is
// the transcript its answers cite).
const aditya = { agent_id: "research-agent", user_id: "aditya" };
const extracted = await call("POST", "/v1/sessions", { principal: aditya }, host);
for (const turn of JSON.parse(process.env.EXTRACTION_TURNS)) {
  await call("POST", `/v1/sessions/${extracted.id}/turns`, { principal: { ...aditya, session_id: extracted.id }, ...turn }, host);
}
const report = await call("POST", `/v1/sessions/${extracted.id}/end`,
  { principal: { ...aditya, session_id: extracted.id }, wait_for_extraction: true }, host);
assert.ok(JSON.stringify(report).includes("created"), JSON.stringify(report));
await call("POST", "/v1/admin/ops/snapshot", {});
const flagged = await call("POST", "/v1/admin/ops/flag-reviews", {});
assert.equal(flagged.unresolved_conflict, 2, JSON.stringify(flagged));

// ---- The browser ---------------------------------------------------------------------------
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const origin = new URL(base).origin;
const requested = [];
const failures = [];
const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
const page = await context.newPage();
page.on("request", (request) => requested.push(request.url()));
page.on("response", (response) => {
  if (response.status() === 404) failures.push(`404: ${response.url()}`);
});
page.on("pageerror", (error) => failures.push(`page error: ${error.message}`));
// The refused key's 401 is the one failed load the run expects.
let refusals = 0;
page.on("console", (message) => {
  if (message.type() !== "error") return;
  if (/status of 401/.test(message.text()) && refusals++ === 0) return;
  failures.push(`console: ${message.text()}`);
});
const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
const step = (name) => console.log(`ok - ${name}`);

// Every form control has a label (an accessible name), on every page checked.
async function labelled(where) {
  const unlabelled = await page.$$eval("input, select, textarea", (els) =>
    els.filter((el) => el.type !== "hidden" && !el.labels?.length && !el.getAttribute("aria-label")).map((el) => el.outerHTML));
  assert.deepEqual(unlabelled, [], `unlabelled controls on ${where}`);
}

try {
  // The page and its assets allow nothing but this host.
  for (const asset of ["/inspector", "/inspector/app.js", "/inspector/app.css"]) {
    const policy = (await fetch(base + asset)).headers.get("content-security-policy") || "";
    assert.ok(policy.startsWith("default-src 'none'") && policy.includes("connect-src 'self'"), `${asset}: ${policy}`);
  }
  // Sign in: a wrong key is refused, the right one kept in sessionStorage, never in the URL.
  await page.goto(`${base}/inspector`);
  await page.getByLabel("Admin key").fill("not-the-key");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("That admin key was refused.").waitFor();
  await labelled("sign in");
  await page.getByLabel("Admin key").fill(adminKey);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Records" }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem("retold.adminKey")), adminKey);
  assert.ok(!page.url().includes(adminKey), page.url());
  step("sign in (refused key, then kept in sessionStorage, never in the URL)");

  // Records: paginated (50 a page), searched as you type, filtered by scope and status.
  const { total } = await call("GET", "/v1/admin/records?limit=1");
  assert.ok(total > 50 && total <= 100, `seeded ${total} records`);
  await page.locator("#record-count", { hasText: `1–50 of ${total}` }).waitFor();
  await page.getByRole("button", { name: "Next" }).click();
  await page.locator("#record-count", { hasText: `51–${total} of ${total}` }).waitFor();
  await page.getByLabel("Search").fill("Zed");
  await page.locator("#record-results").getByText("Jo's preferred editor is Zed now.").waitFor();
  // The assistant's answer, kept by turn memory, is told apart from the memory.
  await page.locator("#record-count", { hasText: "1–2 of 2" }).waitFor();
  await page.locator("#record-results tr", { hasText: "Zed, since you switched" }).getByText("episodic (turn)").waitFor();
  await page.getByLabel("Search").fill("");
  await page.getByLabel("Scope").fill("user:jo");
  await page.getByLabel("Status").selectOption("superseded");
  await page.locator("#record-results").getByText("Jo's preferred editor is Helix.").waitFor();
  await page.locator("#record-count", { hasText: "1–1 of 1" }).waitFor();
  await labelled("records");
  await shot("records");
  step("browse a scope: pages, search-as-you-type, scope and status filters");

  // A record's history: supersession chain, conflict, audit timeline.
  await page.getByLabel("Status").selectOption("");
  await page.getByLabel("Search").fill("Zed");
  await page.locator("#record-results").getByRole("link", { name: zed.record_id }).click();
  await page.getByRole("heading", { name: `Record ${zed.record_id}` }).waitFor();
  const recordText = await page.locator("main").innerText();
  assert.ok(recordText.includes("Jo's preferred editor is Helix."), "the older record is in the chain");
  assert.ok(recordText.includes(vim.record_id), "the conflict is listed");
  assert.ok(recordText.includes("record.superseding"), "the audit timeline shows the write");
  assert.ok(!/\[object |undefined/.test(recordText), "nothing rendered as a bare value");
  await page.getByRole("link", { name: helix.record_id }).first().click();
  await page.getByRole("heading", { name: `Record ${helix.record_id}` }).waitFor();
  assert.ok((await page.locator("main").innerText()).includes("record.superseded"));
  await shot("record");
  step("a record's supersession chain, conflicts and audit timeline");

  // Try a search as jo, then open its trace: channels, fused order, drops, waterfall.
  await page.getByRole("link", { name: "Try a search" }).click();
  await page.getByLabel("User id").fill("jo");
  await page.getByLabel("Query").fill("Which editor does Jo prefer?");
  await labelled("try a search");
  await page.getByRole("button", { name: "Search" }).click();
  await page.locator("#try-results").getByText("Jo's preferred editor is Zed now.").waitFor();
  await shot("try-search");
  await page.getByRole("link", { name: "Open the trace" }).click();
  await page.getByRole("heading", { name: /^Search trace/ }).waitFor();
  for (const stage of ["eligibility", "dense", "lexical", "fusion", "total"]) {
    assert.equal(await page.locator(`#waterfall [data-stage="${stage}"]`).count(), 1, `waterfall row ${stage}`);
  }
  // Each channel's candidates with rank and score, and every drop with its stage and reason.
  const denseFirst = await page.locator("h3", { hasText: /^dense \(/ }).locator("xpath=following-sibling::table[1]")
    .locator("tbody tr").first().locator("td").allInnerTexts();
  assert.equal(denseFirst[0], "1", `dense rank 1: ${denseFirst}`);
  assert.match(denseFirst[2], /^0\.\d{4}$/, `dense score: ${denseFirst}`);
  const dropped = await page.locator("table", { has: page.getByText("Every candidate a stage removed") }).locator("tbody tr").first().locator("td").allInnerTexts();
  assert.ok(dropped.length === 3 && /^mem_/.test(dropped[0]) && dropped[1] && dropped[2], `a drop: ${dropped}`);
  const traceText = await page.locator("main").innerText();
  for (const heading of ["Request", "Where the time went", "Channels", "Fused order", "Dropped", "Results"]) {
    assert.ok(traceText.includes(heading), `trace section ${heading}`);
  }
  assert.ok(traceText.includes("Which editor does Jo prefer?"));
  assert.ok(!/\[object |\bnull\b|undefined/.test(traceText), "nothing rendered as a bare value");
  assert.ok((await page.locator("main h3").allInnerTexts()).some((t) => t.startsWith("dense (")), "a table per channel");
  await shot("trace");
  await page.locator("#waterfall").scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(artifacts, "trace-view.png") }); // the README's picture
  step("try a search as a principal and open its trace (waterfall, channels, drops)");

  await page.getByRole("link", { name: "Search traces" }).click();
  await page.getByRole("cell", { name: "Which editor does Jo prefer?" }).waitFor();
  step("the search log lists it");

  // Sessions: the turns of the seeded session.
  await page.getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("link", { name: session.id }).click();
  await page.getByText("Zed, since you switched from Helix.").waitFor();
  const sessionText = await page.locator("main").innerText();
  assert.ok(sessionText.includes(decided.decision.id) && sessionText.includes(decided.decision.disposition), "the decision");
  assert.ok(sessionText.includes("What you know about jo"), "the profile");
  await page.getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("link", { name: extracted.id }).click();
  await page.getByRole("heading", { name: /^extraction\.run/ }).waitFor();
  const extraction = await page.locator("main").innerText();
  for (const review of ["revised", "revision_refused", "accepted", "invalid"]) {
    assert.ok(extraction.includes(review), `the candidate reviewed ${review} is shown`);
  }
  assert.ok(/created\s+mem_/.test(extraction), "a written candidate links its record");
  await shot("session");
  step("a session's turns, profile, extraction and decisions");

  // Conflicts: expire the contradicting record through its review, then see the audit event.
  await page.getByRole("link", { name: "Conflicts" }).click();
  await page.getByText("Jo's preferred editor is Vim, it seems.").waitFor();
  await page.getByRole("button", { name: `expire ${vim.record_id}` }).click();
  await page.locator("#resolved-events").waitFor();
  const resolved = await page.locator("#resolved-events").innerText();
  assert.ok(resolved.includes("review.resolved") && resolved.includes("record.expired"), resolved);
  await shot("conflict-resolved");
  await page.locator("#status").getByRole("link", { name: vim.record_id }).click();
  await page.getByRole("heading", { name: `Record ${vim.record_id}` }).waitFor();
  const vimText = await page.locator("#timeline").innerText();
  assert.ok(vimText.includes("review.resolved"), vimText);
  step("resolve a conflict and see the audit event");

  // The review queue: confirm the other contradicting record, then see its audit events.
  await page.getByRole("link", { name: "Review queue" }).click();
  await page.getByRole("button", { name: `confirm ${fish.record_id}` }).click();
  await page.locator("#resolved-events").waitFor();
  const confirmed = await page.locator("#resolved-events").innerText();
  assert.ok(confirmed.includes("review.resolved") && confirmed.includes("record.confirmed"), confirmed);
  // The queue re-renders after the audit events are shown: wait for the item to leave it
  // (Playwright's timeout fails the test if it stays).
  await page.getByRole("button", { name: `confirm ${fish.record_id}` }).waitFor({ state: "detached", timeout: 10_000 })
    .catch((e) => assert.fail(`resolved items leave the queue: ${e.message}`));
  step("the review queue: confirm, and the audit events after");

  // Operations: the snapshot taken while seeding.
  await page.getByRole("link", { name: "Operations" }).click();
  await page.getByText("ops.snapshot").waitFor();
  await shot("operations");
  step("operations status");

  // Keyboard: Tab reaches the navigation, and Enter follows a link.
  await page.locator("body").focus();
  let reached = null;
  for (let i = 0; i < 6 && reached === null; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => ({ tag: document.activeElement?.tagName, text: document.activeElement?.textContent }));
    if (focused.tag === "A" && focused.text === "Records") reached = focused;
  }
  assert.ok(reached, "Tab reaches the Records link");
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Records" }).waitFor();

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Admin key").waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem("retold.adminKey")), null);
  step("sign out forgets the key");

  const offHost = requested.filter((u) => !u.startsWith(origin + "/") && !u.startsWith("data:"));
  assert.deepEqual(offHost, [], "no request leaves the host");
  assert.deepEqual(requested.filter((u) => u.includes(adminKey)), [], "no URL carries the admin key");
  assert.deepEqual(failures, [], "no script errors");
  step(`no request off the host (${requested.length} requests, all to ${origin})`);
} catch (error) {
  await shot("failure").catch(() => {});
  throw error;
} finally {
  await browser.close();
}
