import type { OverheadSummary } from '../metrics.js';

/**
 * The admin console's HTML (GET /admin/). The overview (node, gateway overhead, ledger totals, operator wallet,
 * settings) is server-rendered with every value escaped, so it reads without script; the other views (charts,
 * solvency, providers, the node on the network, the settings form, operator actions) are filled by
 * /admin/assets/console.js from the JSON endpoints under /admin/api/. Every asset comes from the gateway itself (CSP `'self'`; uPlot is served from
 * the npm package); the login form's inline script runs under a per-response nonce.
 */

export function escapeHtml(v: unknown): string {
  return String(v)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#06702a}.bad{color:#b00020}`;

function page(title: string, body: string, nonce: string, head = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style nonce="${nonce}">${STYLE}</style>${head}</head>
<body>${body}</body></html>`;
}

const VIEWS = [
  ['overview', 'Overview'],
  ['charts', 'Calls & revenue'],
  ['solvency', 'Solvency'],
  ['keys', 'Keys'],
  ['audit-log', 'Audit'],
  ['webhooks', 'Webhooks'],
  ['providers', 'Providers'],
  ['network', 'Network'],
  ['settings-view', 'Settings'],
  ['actions', 'Actions'],
] as const;

/** The Content-Security-Policy of an admin page with this nonce. */
export function adminCsp(nonce: string): string {
  return `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

/**
 * The login form: POST /admin/login with the password as JSON; the answer sets the HttpOnly session cookie
 * (the page's script never sees it, and no password is ever put in a cookie).
 */
export function loginPage(nonce: string): string {
  return page(
    'Gateway admin — log in',
    `<h1>Gateway admin</h1>
<p class="bad" id="login-error" hidden></p>
<form id="login"><label>Admin password <input type="password" id="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button></form>
<script nonce="${nonce}">
document.getElementById('login').addEventListener('submit', function (e) {
  e.preventDefault();
  var err = document.getElementById('login-error');
  fetch('/admin/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: document.getElementById('password').value }),
    credentials: 'same-origin',
  }).then(function (r) {
    if (r.ok) { location.reload(); return; }
    return r.json().then(function (b) {
      err.textContent = r.status === 429 ? 'Too many failed logins; try again later.' : 'Wrong admin password.';
      err.hidden = false;
    });
  }).catch(function () { err.textContent = 'The gateway did not answer.'; err.hidden = false; });
});
</script>`,
    nonce,
  );
}

export interface DashboardData {
  node: { name: string; description: string; version: string; npub: string; mints: readonly string[] };
  audit:
    | {
        ok: boolean;
        accounts: number;
        breaches: number;
        totals: Record<string, number>;
      }
    | { error: string };
  wallet:
    | Array<{
        mint: string;
        unit: string;
        amount: number;
        amount_msat: number;
        reserved: number;
        proofs: number;
      }>
    | { error: string };
  settings: Record<string, unknown>;
  /** The gateway's own share of paid calls (gateway_overhead_seconds), since start. */
  overhead: OverheadSummary;
  /** Lightning payouts of held balances not finished yet (the wallet journal), oldest first; absent: no wallet. */
  open_payouts?: Array<{ payout_id: string; state: string; since: string }> | { error: string };
}

function rows(obj: Record<string, unknown>, numeric = false): string {
  return Object.entries(obj)
    .map(
      ([k, v]) =>
        `<tr><th>${escapeHtml(k)}</th><td${numeric ? ' class="n"' : ''}>${escapeHtml(
          Array.isArray(v) ? v.join(', ') : v === null ? '—' : v,
        )}</td></tr>`,
    )
    .join('');
}

export function dashboardPage(nonce: string, d: DashboardData): string {
  const audit =
    'error' in d.audit
      ? `<p class="bad">${escapeHtml(d.audit.error)}</p>`
      : `<p id="audit-status" class="${d.audit.ok ? 'ok' : 'bad'}">Ledger audit: ${
          d.audit.ok ? 'OK' : `${d.audit.breaches} breach(es)`
        } over ${d.audit.accounts} account(s).</p><table id="totals">${rows(d.audit.totals, true)}</table>`;
  const wallet =
    'error' in d.wallet
      ? `<p class="bad">${escapeHtml(d.wallet.error)}</p>`
      : d.wallet.length === 0
        ? '<p>No proofs held.</p>'
        : `<table id="wallet"><tr><th>mint</th><th>unit</th><th>amount</th><th>reserved</th><th>proofs</th></tr>${d.wallet
            .map(
              (w) =>
                `<tr><td>${escapeHtml(w.mint)}</td><td>${escapeHtml(w.unit)}</td><td class="n">${w.amount}</td><td class="n">${w.reserved}</td><td class="n">${w.proofs}</td></tr>`,
            )
            .join('')}</table>`;
  const payouts =
    d.open_payouts === undefined
      ? ''
      : `<h2>Open payouts</h2>${
          'error' in d.open_payouts
            ? `<p class="bad">${escapeHtml(d.open_payouts.error)}</p>`
            : d.open_payouts.length === 0
              ? '<p id="open-payouts">None: every payout is decided and settled.</p>'
              : `<table id="open-payouts"><tr><th>payout</th><th>state</th><th>since</th></tr>${d.open_payouts
                  .map(
                    (p) =>
                      `<tr><td>${escapeHtml(p.payout_id)}</td><td>${escapeHtml(p.state)}</td><td>${escapeHtml(p.since)}</td></tr>`,
                  )
                  .join('')}</table>`
        }`;
  const nav = VIEWS.map(
    ([id, label]) => `<a href="#${id}" data-view="${id}" id="nav-${id}">${escapeHtml(label)}</a>`,
  ).join('');
  return page(
    `${d.node.name} — admin`,
    `<header><h1 id="dashboard">${escapeHtml(d.node.name)} — admin</h1><nav id="nav">${nav}</nav>
<span><button type="button" id="logout">Log out</button><span id="logout-result" class="bad" role="status"></span></span></header>
<main>
<section id="overview" class="view">
<h2>Node</h2><table id="node">${rows({ ...d.node })}</table>
<h2>Gateway overhead per paid call (since start)</h2><table id="overhead">${rows({ calls: d.overhead.calls, 'p50 ms': d.overhead.p50_ms, 'p99 ms': d.overhead.p99_ms }, true)}</table>
<h2>Totals (msats)</h2>${audit}
<h2>Operator wallet</h2>${wallet}
${payouts}
<h2>Settings</h2><table id="settings">${rows(d.settings)}</table>
</section>
<section id="charts" class="view">
<h2>Paid calls and charged msats</h2>
<p><label>Per <select id="granularity"><option value="minute">minute (last hour)</option><option value="hour">hour (last 2 days)</option><option value="day">day (last 30 days)</option></select></label>
<button type="button" id="charts-refresh">Refresh</button></p>
<table id="chart-totals"><tr><th>calls</th><th>errors</th><th>charged msats</th></tr>
<tr><td class="n" id="total-calls">…</td><td class="n" id="total-errors">…</td><td class="n" id="total-msats">…</td></tr></table>
<div class="chart" id="chart-msats"></div><div class="chart" id="chart-calls"></div>
</section>
<section id="solvency" class="view">
<h2>Solvency: proofs held vs. owed to users (msats)</h2>
<p id="solvency-latest">…</p>
<div class="chart" id="chart-solvency"></div><div class="chart" id="chart-surplus"></div>
</section>
<section id="keys" class="view">
<h2>Look a key up</h2>
<form id="key-form"><label>Key id or API key <input type="text" id="key-input" required autocomplete="off" spellcheck="false" placeholder="key id (16 hex) or sk-…"></label>
<button type="submit">Look up</button></form>
<div id="key-result"></div>
</section>
<section id="audit-log" class="view">
<h2>Audit log (newest first)</h2>
<form id="alog-form"><label>Key id <input type="text" id="alog-key" autocomplete="off" spellcheck="false" placeholder="16 hex" pattern="[0-9a-f]{16}"></label>
<label>Status <input type="number" id="alog-status" min="100" max="599"></label>
<label>Since <input type="datetime-local" id="alog-since" step="1"></label>
<label>Until <input type="datetime-local" id="alog-until" step="1"></label>
<button type="submit">Show</button></form>
<div id="alog-result"></div>
<p><button type="button" id="alog-more" hidden>Older records</button></p>
</section>
<section id="webhooks" class="view">
<h2>Webhook deliveries (newest first)</h2>
<form id="deliveries-form"><label>Key id <input type="text" id="deliveries-key" autocomplete="off" spellcheck="false" placeholder="16 hex" pattern="[0-9a-f]{16}"></label>
<label><input type="checkbox" id="deliveries-failed"> failed only</label>
<button type="submit" id="deliveries-refresh">Show</button></form>
<div id="deliveries-result">…</div>
<p><button type="button" id="deliveries-more" hidden>Older deliveries</button></p>
</section>
<section id="providers" class="view"><h2>Providers</h2><div id="providers-table">…</div></section>
<section id="network" class="view">
<h2>Identity on Nostr</h2><div id="network-identity">…</div>
<h2>Relays</h2>
<p><button type="button" id="network-publish">Publish now</button> <span id="network-publish-result" role="status"></span></p>
<div id="network-relays">…</div>
<h2>Nodes paid as providers</h2><div id="network-paid">…</div>
</section>
<section id="settings-view" class="view">
<p id="store-status" role="status"></p>
<h2>Runtime settings</h2>
<p>Changes are validated like <code>PATCH /admin/api/settings</code>, persisted and applied at once.</p>
<form id="settings-form"></form><p id="settings-result" role="status"></p>
</section>
<section id="actions" class="view">
<h2>Operator actions</h2>
<p><button type="button" id="action-recovery">Run the recovery pass</button>
<button type="button" id="action-solvency">Run the solvency check</button></p>
<form id="payout-form"><label>Lightning invoice <input id="payout-invoice" required autocomplete="off"></label>
<button type="submit">Pay out</button></form>
<pre id="action-result" role="status"></pre>
</section>
</main>
<script src="/admin/assets/uPlot.iife.min.js"></script>
<script src="/admin/assets/console.js"></script>`,
    nonce,
    '<link rel="stylesheet" href="/admin/assets/uPlot.min.css"><link rel="stylesheet" href="/admin/assets/console.css">',
  );
}
