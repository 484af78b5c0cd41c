/**
 * The admin dashboard's HTML (GET /admin/): server-rendered, no external assets, every value escaped. The
 * only script is the login form's (it sets the `admin_password` cookie, path /admin, SameSite=Strict, and
 * reloads); it runs under a per-response CSP nonce, so nothing else can.
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

function page(title: string, body: string, nonce: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style nonce="${nonce}">${STYLE}</style></head>
<body>${body}</body></html>`;
}

/** The Content-Security-Policy of an admin page with this nonce. */
export function adminCsp(nonce: string): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

export function loginPage(nonce: string, failed: boolean): string {
  return page(
    'Gateway admin — log in',
    `<h1>Gateway admin</h1>
${failed ? '<p class="bad" id="login-error">Wrong admin password.</p>' : ''}
<form id="login"><label>Admin password <input type="password" id="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button></form>
<script nonce="${nonce}">
document.getElementById('login').addEventListener('submit', function (e) {
  e.preventDefault();
  var v = document.getElementById('password').value;
  document.cookie = 'admin_password=' + encodeURIComponent(v) + '; path=/admin; SameSite=Strict';
  location.reload();
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
    | Array<{ mint: string; unit: string; amount: number; reserved: number; proofs: number }>
    | { error: string };
  settings: Record<string, unknown>;
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
  return page(
    `${d.node.name} — admin`,
    `<h1 id="dashboard">${escapeHtml(d.node.name)} — admin</h1>
<h2>Node</h2><table id="node">${rows({ ...d.node })}</table>
<h2>Totals (msats)</h2>${audit}
<h2>Operator wallet</h2>${wallet}
<h2>Settings</h2><table id="settings">${rows(d.settings)}</table>
<p>Change settings with <code>PATCH /admin/api/settings</code>; see docs/endpoints.md.</p>`,
    nonce,
  );
}
