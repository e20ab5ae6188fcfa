// Retold inspector: a small single-page view over the admin API. The admin key is entered once
// and kept in this tab's sessionStorage (never in a URL); every request goes to this host only
// (the page's Content-Security-Policy says so too). Everything shown is set as text, never as
// HTML: record contents are user data.

const KEY = "retold.adminKey";
const PAGE = 50;
// The current navigation: its requests are aborted when the next one begins, an answer that
// arrives after that is dropped (so a slow page never replaces a newer one), and its timers
// are cleared.
let current = { controller: new AbortController(), cleanups: [] };
class Superseded extends Error {}
const offsetOf = (params) => Math.max(0, Number.parseInt(params.get("offset") || "0", 10) || 0);
const view = document.getElementById("view");
const statusBox = document.getElementById("status");
const nav = document.getElementById("nav");

// ---- DOM helpers ------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const recordLink = (id) => h("a", { href: `#/record/${encodeURIComponent(id)}`, class: "id" }, id);
const sessionLink = (id) => h("a", { href: `#/session/${encodeURIComponent(id)}`, class: "id" }, id);
const traceLink = (id, text) => h("a", { href: `#/trace/${encodeURIComponent(id)}`, class: "id" }, text || id);
const pill = (status) => h("span", { class: `pill s-${status}` }, status);
const when = (at) => (at ? new Date(at).toLocaleString() : "—");

function table(headers, rows, caption) {
  const numeric = headers.map((t) => (t.endsWith("#") || t === "Score" || t === "ms" ? "num" : null));
  return h("table", {},
    caption ? h("caption", { class: "muted" }, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((t, i) => h("th", { scope: "col", class: numeric[i] }, t)))),
    h("tbody", {}, rows.length ? rows.map((cells) => h("tr", {}, cells.map((c, i) => h("td", { class: numeric[i] }, c))))
      : h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, "Nothing here."))));
}

function fields(pairs) {
  return h("dl", { class: "fields" }, pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [
    h("dt", {}, k), h("dd", {}, v === null || v === "" ? "—" : v)]));
}

function say(message, isError = false) {
  statusBox.replaceChildren(isError ? h("span", { class: "error" }, message) : message);
}

function show(title, ...content) {
  document.title = `${title} · Retold inspector`;
  view.replaceChildren(h("h1", {}, title), ...content.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  view.focus();
}

// ---- The admin API -------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, detail) {
    super(`${code}: ${detail}`);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const navigation = current;
  const headers = { Authorization: `Bearer ${sessionStorage.getItem(KEY) || ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response, text;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      signal: navigation.controller.signal });
    text = await response.text();
  } catch (e) {
    if (navigation !== current) throw new Superseded();
    throw e;
  }
  if (navigation !== current) throw new Superseded();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!response.ok) {
    const error = new ApiError(response.status, data?.code || `http_${response.status}`, data?.detail || text);
    if (response.status === 401 && sessionStorage.getItem(KEY) !== null) {
      // The key stopped working (rotated, server restarted with another): sign in again, once
      // however many requests were in flight.
      sessionStorage.removeItem(KEY);
      login("The admin key was refused; enter it again.");
    }
    throw error;
  }
  return data;
}

const query = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
};

// ---- Sign in -------------------------------------------------------------------------------

function login(message) {
  nav.hidden = true;
  const input = h("input", { id: "admin-key", name: "admin-key", type: "password", autocomplete: "current-password", required: true });
  const error = h("p", { class: "error", id: "login-error", role: "alert" }, message || "");
  const form = h("form", {
    onsubmit: async (event) => {
      event.preventDefault();
      const key = input.value.trim();
      let response;
      try {
        response = await fetch("/v1/admin/ops/status", { headers: { Authorization: `Bearer ${key}` } });
      } catch (e) {
        error.textContent = `Could not reach the server: ${e.message}`;
        return;
      }
      if (response.status === 401 || response.status === 403) {
        error.textContent = "That admin key was refused.";
        input.select();
        return;
      }
      if (!response.ok) {
        error.textContent = `Could not sign in: HTTP ${response.status}`;
        return;
      }
      sessionStorage.setItem(KEY, key);
      say("Signed in.");
      if (!location.hash || location.hash === "#/login") location.hash = "#/records";
      else route();
    },
  }, h("label", { for: "admin-key" }, "Admin key", input), h("button", { type: "submit" }, "Sign in"), error);
  show("Sign in", h("div", { class: "login" },
    h("p", {}, "Enter the admin key (RETOLD__AUTH__ADMIN_KEY). It is kept in this tab only and sent with each request to this server."),
    form));
  input.focus();
}

document.getElementById("signout").addEventListener("click", () => {
  sessionStorage.removeItem(KEY);
  say("Signed out.");
  login();
});

// ---- Records -------------------------------------------------------------------------------

const STATUSES = ["", "provisional", "confirmed", "superseded", "expired", "deleted"];
const SCOPE = /^((user|project|org):[A-Za-z0-9_.@+-]{1,128}|agent:[A-Za-z0-9_.@+-]{1,128}(\/[A-Za-z0-9_.@+-]{1,128})?)$/;

async function records(params) {
  const scope = h("input", { id: "f-scope", name: "scope", value: params.get("scope") || "", placeholder: "user:jo" });
  const status = h("select", { id: "f-status", name: "status" },
    STATUSES.map((s) => h("option", { value: s, selected: (params.get("status") || "") === s }, s || "any status")));
  const q = h("input", { id: "f-q", name: "q", type: "search", value: params.get("q") || "", placeholder: "words in the content" });
  const results = h("div", { id: "record-results" });
  const count = h("p", { id: "record-count", "aria-live": "polite", class: "muted" });
  let offset = offsetOf(params);
  let timer = null;
  let latest = 0;

  async function load() {
    const mine = ++latest;
    const at = offset;
    const filter = { scope: scope.value.trim(), status: status.value, q: q.value.trim() };
    if (filter.scope && !SCOPE.test(filter.scope)) {
      count.textContent = "Type a whole scope: user:jo, project:p, org:o, agent:a or agent:a/u.";
      return; // no request for a scope still being typed
    }
    history.replaceState(null, "", `#/records${query({ ...filter, offset: at || undefined })}`);
    try {
      const page = await api("GET", `/v1/admin/records${query({ ...filter, limit: PAGE, offset: at })}`);
      if (mine !== latest) return; // a newer keystroke won
      const rows = page.records.map((r) => [recordLink(r.id), r.content, `${r.scope_kind}:${r.scope_id}`, pill(r.status), kind(r), when(r.created_at)]);
      const last = at + page.records.length;
      const of = `${page.total}${page.more ? "+" : ""}`;
      count.textContent = page.total ? `${at + 1}–${last} of ${of}` : "0 records";
      results.replaceChildren(
        table(["Id", "Content", "Scope", "Status", "Type", "Created"], rows),
        h("div", { class: "pager" },
          h("button", { type: "button", class: "secondary", disabled: at === 0, onclick: () => { offset = Math.max(0, at - PAGE); load(); } }, "Previous"),
          h("span", {}, count.textContent),
          h("button", { type: "button", class: "secondary", disabled: page.records.length < PAGE || (!page.more && last >= page.total), onclick: () => { offset = at + PAGE; load(); } }, "Next")));
    } catch (e) {
      if (mine === latest && !(e instanceof Superseded)) results.replaceChildren(h("p", { class: "error" }, e.message));
    }
  }
  const soon = () => { clearTimeout(timer); offset = 0; timer = setTimeout(load, 200); };
  current.cleanups.push(() => clearTimeout(timer));
  for (const input of [scope, q]) input.addEventListener("input", soon);
  status.addEventListener("change", soon);
  show("Records",
    h("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); load(); } },
      h("label", { for: "f-scope" }, "Scope", scope), h("label", { for: "f-status" }, "Status", status),
      h("label", { for: "f-q" }, "Search", q)),
    count,
    results);
  await load();
}

/** A record's type, and "turn" for a session turn kept verbatim (turn memory). */
function kind(r) {
  return r.origin === "turn" ? `${r.type} (turn)` : r.type;
}

async function record(id) {
  const [detail, events] = await Promise.all([
    api("GET", `/v1/admin/records/${encodeURIComponent(id)}`),
    api("GET", `/v1/admin/records/${encodeURIComponent(id)}/events`),
  ]);
  const r = detail.record;
  show(`Record ${r.id}`,
    fields([["Content", r.content], ["Status", pill(r.status)], ["Type", kind(r)], ["Said by", r.speaker], ["Scope", `${r.scope_kind}:${r.scope_id}`],
      ["Subject", r.subject], ["Source", `${r.source_kind}${r.source_ref ? ` (${r.source_ref})` : ""}`], ["Evidence", r.evidence],
      ["Confidence", r.confidence], ["Reinforcements", r.reinforcements], ["Version", r.version], ["Creator", r.creator_agent_id],
      ["Created", when(r.created_at)], ["Event time", when(r.event_at)], ["Expires", when(r.expires_at)],
      ["Tags", (r.tags || []).join(", ")]]),
    h("h2", {}, "Entity links"),
    table(["Entity", "Role"], detail.links.map((l) => [h("span", { class: "id" }, l.entity_id), l.role])),
    h("h2", {}, "Supersession"),
    h("p", {}, "Superseded by: ", detail.superseded_by.length ? detail.superseded_by.flatMap((s, i) => [i ? ", " : "", recordLink(s)]) : "nothing (current)"),
    table(["Older record", "Content", "Status"], detail.supersedes.map((o) => [recordLink(o.id), o.content, pill(o.status)]), "Older records this one replaced, newest first"),
    h("h2", {}, "Conflicts"),
    table(["Stays the result", "Contradicted by"], detail.conflicts.map((c) => [recordLink(c.record_id), recordLink(c.conflicting_id)])),
    h("h2", {}, "Audit timeline"),
    timeline(events.events));
}

function timeline(events) {
  if (!events.length) return h("p", { class: "muted" }, "No events.");
  return h("ol", { class: "timeline", id: "timeline" }, events.map((e) =>
    h("li", {}, h("strong", {}, e.kind), " ", h("span", { class: "muted" }, `${when(e.at)}${e.actor ? ` by ${e.actor}` : ""}`),
      e.details && Object.keys(e.details).length ? h("pre", {}, JSON.stringify(e.details, null, 2)) : null)));
}

// ---- Search traces -------------------------------------------------------------------------

async function searches(params) {
  const offset = offsetOf(params);
  const page = await api("GET", `/v1/admin/search-log${query({ limit: PAGE + 1, offset })}`);
  const older = page.searches.length > PAGE;
  show("Search traces",
    table(["Trace", "When", "Principal", "Query", "Eligible #", "Results #", "ms"], page.searches.slice(0, PAGE).map((s) => [
      traceLink(s.id), when(s.at), `${s.agent_id} / ${s.user_id}`, s.query, s.eligible_count, s.results, (s.total_us / 1000).toFixed(1)])),
    h("div", { class: "pager" },
      offset ? h("a", { href: `#/searches${query({ offset: Math.max(0, offset - PAGE) || undefined })}` }, "Newer") : null,
      older ? h("a", { href: `#/searches${query({ offset: offset + PAGE })}` }, "Older") : null));
}

// Stages in pipeline order. Dense runs beside lexical-then-entity, so those start together.
const BEFORE = ["eligibility", "rewrite"];
const AFTER = ["fusion", "fetch", "freshness", "gate", "duplicates", "reranker", "newer_first", "budget"];

function waterfall(timings) {
  const us = (stage) => Number(timings[stage] || 0);
  const bars = [];
  let at = 0;
  for (const stage of BEFORE) if (stage in timings) { bars.push([stage, at, us(stage)]); at += us(stage); }
  const channels = at;
  if ("dense" in timings) bars.push(["dense", channels, us("dense")]);
  if ("lexical" in timings) bars.push(["lexical", channels, us("lexical")]);
  if ("entity" in timings) bars.push(["entity", channels + us("lexical"), us("entity")]);
  at = Math.max(channels + us("dense"), channels + us("lexical") + us("entity"));
  for (const stage of AFTER) if (stage in timings) { bars.push([stage, at, us(stage)]); at += us(stage); }
  for (const stage of Object.keys(timings)) {
    if (stage !== "total" && !bars.some(([s]) => s === stage)) { bars.push([stage, at, us(stage)]); at += us(stage); }
  }
  const total = Math.max(us("total"), at, 1);
  bars.push(["total", 0, us("total")]);
  return h("div", { class: "waterfall", id: "waterfall", role: "img", "aria-label": `Stage timings: ${bars.map(([s, , d]) => `${s} ${(d / 1000).toFixed(2)} ms`).join(", ")}` },
    bars.map(([stage, start, duration]) => {
      const bar = h("div", { class: `wf-bar ${stage}`, title: `${stage}: ${(duration / 1000).toFixed(2)} ms` });
      bar.style.left = `${(100 * start) / total}%`;
      bar.style.width = `${(100 * duration) / total}%`;
      return h("div", { class: "wf-row", "data-stage": stage }, h("span", {}, stage), h("div", { class: "wf-track" }, bar),
        h("span", { class: "num" }, `${(duration / 1000).toFixed(2)} ms`));
    }));
}

async function trace(id) {
  const t = await api("GET", `/v1/admin/search-log/${encodeURIComponent(id)}`);
  const channelTables = Object.entries(t.channels || {}).map(([channel, candidates]) => [
    h("h3", {}, `${channel} (${candidates.length})`),
    table(["Rank #", "Record", "Score", "Detail"], candidates.map((c) => [c.rank, recordLink(c.record_id), c.score === undefined ? "" : Number(c.score).toFixed(4), c.detail || ""])),
  ]);
  show(`Search trace ${t.id || id}`,
    fields([["When", when(t.at)], ["Principal", `${t.principal?.agent_id} / ${t.principal?.user_id}`], ["Query run", t.query],
      ["Rewrite", `${t.rewrite_status}${t.rewrite_note ? ` (${t.rewrite_note})` : ""}`], ["Eligible records", t.eligible_count]]),
    h("h2", {}, "Request"),
    table(["Field", "Value"], Object.entries(t.request || {}).map(([k, v]) => [k, v])),
    h("h2", {}, "Where the time went"),
    waterfall(t.timings_us || {}),
    h("h2", {}, "Channels"),
    channelTables.flat(),
    h("h2", {}, "Fused order"),
    table(["Fused #", "Record", "Score"], (t.fused || []).map((f, i) => [i + 1, recordLink(f.record_id), Number(f.score).toFixed(4)])),
    h("h2", {}, "Dropped"),
    table(["Record", "Stage", "Reason"], (t.drops || []).map((d) => [recordLink(d.record_id), d.stage, d.reason]), "Every candidate a stage removed, and why"),
    (t.notes || []).length ? [h("h2", {}, "Notes"), table(["Stage", "Note"], t.notes.map((n) => [n.stage, n.note || n.detail || JSON.stringify(n)]))] : null,
    h("h2", {}, "Results"),
    table(["Rank #", "Record", "Explanation"], (t.results || []).map((r) => [r.rank, recordLink(r.record_id), r.explanation || ""])));
}

// ---- Try a search --------------------------------------------------------------------------

async function trySearch(params) {
  const input = (id, label, value, attrs = {}) => {
    const el = h("input", { id, name: id, value: value || "", ...attrs });
    return [el, h("label", { for: id }, label, el)];
  };
  const [agent, agentLabel] = input("t-agent", "Agent id", params.get("agent") || "assistant", { required: true });
  const [user, userLabel] = input("t-user", "User id", params.get("user") || "", { required: true });
  const [project, projectLabel] = input("t-project", "Project id (optional)", params.get("project") || "");
  const [text, textLabel] = input("t-query", "Query", params.get("q") || "", { required: true, size: 40 });
  const [limit, limitLabel] = input("t-limit", "Limit", params.get("limit") || "10", { type: "number", min: 1, max: 100 });
  const out = h("div", { id: "try-results", "aria-live": "polite" });
  const form = h("form", {
    class: "filters",
    onsubmit: async (event) => {
      event.preventDefault();
      const principal = { agent_id: agent.value.trim(), user_id: user.value.trim() };
      if (project.value.trim()) principal.project_id = project.value.trim();
      history.replaceState(null, "", `#/try${query({ agent: principal.agent_id, user: principal.user_id, project: principal.project_id, q: text.value, limit: limit.value })}`);
      out.replaceChildren(h("p", { class: "muted" }, "Searching…"));
      try {
        const found = await api("POST", "/v1/admin/search", { principal, query: text.value, limit: Number(limit.value) });
        out.replaceChildren(
          h("p", {}, `${found.results.length} results of ${found.eligible_count} eligible records. `, traceLink(found.search_id, "Open the trace")),
          table(["Rank #", "Record", "Content", "Score", "Explanation"], found.results.map((r) => [
            r.rank, recordLink(r.record.id), r.passage ? r.passage.text : r.record.content, Number(r.score).toFixed(4), r.explanation])));
      } catch (e) {
        out.replaceChildren(h("p", { class: "error" }, e.message));
      }
    },
  }, agentLabel, userLabel, projectLabel, textLabel, limitLabel, h("button", { type: "submit" }, "Search"));
  show("Try a search", h("p", { class: "muted" }, "Runs memory_search as the principal you name, with its grants; the search is logged like any other."), form, out);
}

// ---- Sessions ------------------------------------------------------------------------------

async function sessions(params) {
  const offset = offsetOf(params);
  const page = await api("GET", `/v1/admin/sessions${query({ limit: PAGE + 1, offset })}`);
  const older = page.sessions.length > PAGE;
  show("Sessions",
    table(["Session", "Principal", "Started", "Ended", "Turns #"], page.sessions.slice(0, PAGE).map((s) => [
      sessionLink(s.id), `${s.agent_id} / ${s.user_id}${s.project_id ? ` (${s.project_id})` : ""}`, when(s.started_at), when(s.ended_at), s.turns])),
    h("div", { class: "pager" },
      offset ? h("a", { href: `#/sessions${query({ offset: Math.max(0, offset - PAGE) || undefined })}` }, "Newer") : null,
      older ? h("a", { href: `#/sessions${query({ offset: offset + PAGE })}` }, "Older") : null));
}

async function session(id) {
  const path = `/v1/admin/sessions/${encodeURIComponent(id)}`;
  const [turns, events, decisions, profile] = await Promise.all([
    api("GET", `${path}/turns`), api("GET", `${path}/events`), api("GET", `${path}/decisions`),
    api("GET", `${path}/profile`).catch((e) => (e.status === 404 ? null : Promise.reject(e))),
  ]);
  const extraction = events.events.filter((e) => e.kind.startsWith("extraction."));
  show(`Session ${id}`,
    h("h2", {}, "Turns"),
    table(["Turn #", "Role", "Content", "Said"], turns.turns.map((t) => [t.turn, t.speaker ? `${t.role} (${t.speaker})` : t.role, t.content, when(t.at)])),
    h("h2", {}, "Profile"),
    profile ? [fields([["Tokens", profile.tokens], ["Cut", profile.cut], ["Hash", h("span", { class: "id" }, profile.content_hash)]]),
      h("pre", {}, profile.text),
      table(["Record", "Category", "Why"], profile.records.map((p) => [recordLink(p.record_id), p.category, p.why]))]
      : h("p", { class: "muted" }, "No profile."),
    h("h2", {}, "Extraction"),
    extraction.length ? extraction.map(extractionRun) : h("p", { class: "muted" }, "No extraction run yet."),
    h("h2", {}, "Decisions"),
    table(["Decision", "Disposition", "Reason", "Gaps", "Searches", "Admitted"], decisions.decisions.map((d) => [
      h("span", { class: "id" }, d.id), d.disposition, d.reason || d.failure || "", (d.gaps || []).map((g) => g.text || g.kind || JSON.stringify(g)).join("; "),
      (d.searches || []).flatMap((s, i) => [i ? " " : "", traceLink(s)]), (d.admitted || []).flatMap((a, i) => [i ? " " : "", recordLink(a)])])),
    h("h2", {}, "Events"),
    timeline(events.events));
}

function extractionRun(event) {
  const d = event.details || {};
  let outcomes = null;
  try { outcomes = d.outcomes ? JSON.parse(d.outcomes) : null; } catch { outcomes = null; }
  return h("section", {}, h("h3", {}, `${event.kind} at ${when(event.at)}`),
    fields([["Models", `extract ${d.extract_model || "?"} (${d.extract_prompt || "?"}), review ${d.review_model || "?"} (${d.review_prompt || "?"})`],
      ["Proposed / written", `${d.proposed ?? "?"} / ${d.written ?? "?"}`], ["Error", d.error]]),
    Array.isArray(outcomes)
      ? table(["Candidate #", "Review", "Reason", "Outcome"], outcomes.map((o) => [
        o.index, o.review, o.reason || "",
        o.write ? (o.write.error ? h("span", { class: "error" }, o.write.error)
          : [o.write.outcome, " ", o.write.record_id ? recordLink(o.write.record_id) : null]) : "not written"]))
      : h("pre", {}, JSON.stringify(d, null, 2)));
}

// ---- Review queue and conflicts --------------------------------------------------------------

const ACTIONS = { activation: ["approve", "reject"], default: ["confirm", "expire", "forget"] };

function resolveButtons(review, after) {
  const actions = review.reason === "activation" ? ACTIONS.activation : ACTIONS.default;
  return h("div", { class: "actions" }, actions.map((action) => h("button", {
    type: "button",
    class: action === "forget" || action === "reject" ? "secondary" : null,
    "aria-label": `${action} ${review.record_id}`,
    onclick: async (event) => {
      event.currentTarget.disabled = true;
      try {
        await api("POST", `/v1/admin/reviews/${encodeURIComponent(review.id)}/resolve`, { action });
        const events = await api("GET", `/v1/admin/records/${encodeURIComponent(review.record_id)}/events`);
        const latest = events.events.slice(-3);
        say(h("span", {}, `Resolved ${review.record_id} (${action}). Latest audit events: `,
          h("span", { id: "resolved-events" }, latest.map((e) => e.kind).join(", ")), ". ", recordLink(review.record_id)));
        await after();
      } catch (e) {
        say(`Could not ${action}: ${e.message}`, true);
      }
    },
  }, action)));
}

async function reviews() {
  const page = await api("GET", "/v1/admin/reviews?limit=200");
  show("Review queue",
    h("div", { class: "actions" }, h("button", { type: "button", class: "secondary", onclick: async () => {
      const flagged = await api("POST", "/v1/admin/ops/flag-reviews", {});
      say(`Flagged ${flagged.total} records for review.`);
      await reviews();
    } }, "Flag due reviews")),
    table(["Record", "Reason", "Flagged", "Resolve"], page.reviews.map((r) => [recordLink(r.record_id), r.reason, when(r.flagged_at), resolveButtons(r, reviews)])));
}

async function conflicts(params) {
  const offset = offsetOf(params);
  const [page, open] = await Promise.all([
    api("GET", `/v1/admin/conflicts${query({ limit: PAGE + 1, offset })}`),
    api("GET", "/v1/admin/reviews?limit=1000"),
  ]);
  const reviewOf = new Map(open.reviews.map((r) => [r.record_id, r]));
  const again = () => conflicts(params);
  show("Conflicts",
    h("p", { class: "muted" }, "The first record stays the normal result; the second contradicts it with lower trust. Resolve through its review (flag due reviews to queue it)."),
    h("div", { class: "actions" }, h("button", { type: "button", class: "secondary", onclick: async () => {
      const flagged = await api("POST", "/v1/admin/ops/flag-reviews", {});
      say(`Flagged ${flagged.total} records for review.`);
      await again();
    } }, "Flag due reviews")),
    table(["Stays the result", "Contradicted by", "Review"], page.conflicts.slice(0, PAGE).map((c) => [
      h("div", {}, recordLink(c.record.id), " ", pill(c.record.status), h("div", {}, c.record.content)),
      h("div", {}, recordLink(c.conflicting.id), " ", pill(c.conflicting.status), h("div", {}, c.conflicting.content)),
      reviewOf.has(c.conflicting.id) ? resolveButtons(reviewOf.get(c.conflicting.id), again) : h("span", { class: "muted" }, "not queued")])),
    h("div", { class: "pager" },
      offset ? h("a", { href: `#/conflicts${query({ offset: Math.max(0, offset - PAGE) || undefined })}` }, "Newer") : null,
      page.conflicts.length > PAGE ? h("a", { href: `#/conflicts${query({ offset: offset + PAGE })}` }, "Older") : null));
}

// ---- Operations ----------------------------------------------------------------------------

async function ops() {
  const status = await api("GET", "/v1/admin/ops/status");
  show("Operations",
    h("h2", {}, "Snapshots"),
    table(["File", "Bytes #", "Taken"], status.snapshots.map((s) => [s.name, s.bytes, when(s.modified_at)])),
    h("h2", {}, "Recent operations"),
    table(["When", "Operation", "By", "Details"], status.events.map((e) => [when(e.at), e.kind, e.actor || "", h("code", {}, JSON.stringify(e.details))])));
}

// ---- Routing -------------------------------------------------------------------------------

const ROUTES = [
  [/^\/records$/, (m, p) => records(p)],
  [/^\/record\/([^/]+)$/, (m) => record(decodeURIComponent(m[1]))],
  [/^\/searches$/, (m, p) => searches(p)],
  [/^\/trace\/([^/]+)$/, (m) => trace(decodeURIComponent(m[1]))],
  [/^\/try$/, (m, p) => trySearch(p)],
  [/^\/sessions$/, (m, p) => sessions(p)],
  [/^\/session\/([^/]+)$/, (m) => session(decodeURIComponent(m[1]))],
  [/^\/reviews$/, () => reviews()],
  [/^\/conflicts$/, (m, p) => conflicts(p)],
  [/^\/ops$/, () => ops()],
];

async function route() {
  current.controller.abort();
  for (const cleanup of current.cleanups.splice(0)) cleanup();
  current = { controller: new AbortController(), cleanups: [] };
  if (!sessionStorage.getItem(KEY)) return login();
  nav.hidden = false;
  const [path, search] = (location.hash.slice(1) || "/records").split("?");
  for (const a of nav.querySelectorAll("a")) {
    const target = a.getAttribute("href").slice(1);
    if (target === path || path.startsWith(target.replace(/s$/, "/"))) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const params = new URLSearchParams(search || "");
  for (const [pattern, render] of ROUTES) {
    const m = path.match(pattern);
    if (m) {
      try {
        await render(m, params);
      } catch (e) {
        if (!(e instanceof Superseded) && e.status !== 401) show("Something failed", h("p", { class: "error" }, e.message));
      }
      return;
    }
  }
  show("Not found", h("p", {}, "No such page. "), h("a", { href: "#/records" }, "Records"));
}

window.addEventListener("hashchange", () => { statusBox.replaceChildren(); route(); });
route();
