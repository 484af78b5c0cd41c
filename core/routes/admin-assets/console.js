// The admin console's views (served by the gateway: /admin/assets/console.js). Every figure comes from the
// JSON endpoints under /admin/api/, the same ones scripts use. No framework, no build:
// plain DOM and uPlot (window.uPlot, /admin/assets/uPlot.iife.min.js). Text goes in with textContent only.
(() => {
  const $ = (id) => document.getElementById(id);
  const fmt = (n) => Number(n).toLocaleString('en-US');
  const when = (ms) =>
    ms === null || ms === undefined ? '—' : new Date(ms).toISOString().replace('.000Z', 'Z');

  async function api(method, path, body) {
    const r = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await r.json().catch(() => null);
    if (!r.ok) {
      const e = json?.error;
      // The session expired (ADMIN_SESSION_HOURS) or was ended elsewhere: back to the login form.
      if (r.status === 401 && e?.code === 'admin_auth_required') toLogin();
      throw new Error(e ? `${r.status} ${e.code}: ${e.message}` : `HTTP ${r.status}`);
    }
    return json;
  }

  // GET /admin/ without a live session answers the login form.
  function toLogin() {
    location.replace('/admin/');
  }

  // Log out: the session ends in the store (POST /admin/logout clears the cookie), then the login form.
  $('logout').addEventListener('click', async () => {
    const button = $('logout');
    button.disabled = true;
    try {
      const r = await fetch('/admin/logout', { method: 'POST', credentials: 'same-origin' });
      if (r.status !== 204) throw new Error(`HTTP ${r.status}`);
      toLogin();
    } catch (err) {
      button.disabled = false;
      $('logout-result').textContent = ` Logout failed: ${err.message}`;
    }
  });

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function table(headers, rows, id) {
    const t = el('table');
    if (id) t.id = id;
    const hr = el('tr');
    for (const h of headers) hr.appendChild(el('th', h));
    t.appendChild(hr);
    for (const row of rows) {
      const tr = el('tr');
      for (const c of row) tr.appendChild(el('td', c === null || c === undefined ? '—' : c));
      t.appendChild(tr);
    }
    return t;
  }

  // Wide tables scroll sideways in their own box, never the page (narrow screens).
  function scroll(t) {
    const box = el('div', undefined, 'scroll');
    box.appendChild(t);
    return box;
  }

  // ---- views ----
  const loaders = {};
  let current;
  function show(id) {
    if (!$(id)) id = 'overview';
    for (const v of document.querySelectorAll('.view')) v.classList.toggle('active', v.id === id);
    for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === id);
    current = id;
    const load = loaders[id];
    if (load) load().catch((err) => showError(id, err));
  }
  function showError(id, err) {
    const p = el('p', String(err.message || err), 'bad');
    p.dataset.error = '1';
    $(id).appendChild(p);
  }
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));

  // ---- charts ----
  const plots = {};
  function width(id) {
    return Math.max(260, Math.min(960, $(id).clientWidth || document.body.clientWidth - 40));
  }
  function plot(id, title, xs, series) {
    if (plots[id]) plots[id].destroy();
    const opts = {
      title,
      width: width(id),
      height: 220,
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          fill: s.fill,
          points: { show: false },
        })),
      ],
      // Room for the widest tick label (7-digit msats with separators), measured rather than guessed.
      axes: [
        {},
        { size: (_u, values) => 16 + Math.max(40, ...(values ?? []).map((v) => String(v).length * 8)) },
      ],
    };
    plots[id] = new window.uPlot(opts, [xs, ...series.map((s) => s.data)], $(id));
  }
  const POINTS = { minute: 60, hour: 48, day: 30 };
  loaders.charts = async () => {
    const g = $('granularity').value;
    const d = await api('GET', `/admin/api/timeseries?granularity=${g}&points=${POINTS[g]}`);
    const xs = d.points.map((p) => p.t / 1000);
    let calls = 0;
    let errors = 0;
    let msats = 0;
    for (const p of d.points) {
      calls += p.calls;
      errors += p.errors;
      msats += p.charged_msats;
    }
    $('total-calls').textContent = fmt(calls);
    $('total-errors').textContent = fmt(errors);
    $('total-msats').textContent = fmt(msats);
    plot('chart-msats', `Charged msats per ${g}`, xs, [
      {
        label: 'msats',
        color: '#0a6',
        fill: 'rgba(0,170,102,.1)',
        data: d.points.map((p) => p.charged_msats),
      },
    ]);
    plot('chart-calls', `Calls and errors per ${g}`, xs, [
      { label: 'calls', color: '#124', data: d.points.map((p) => p.calls) },
      { label: 'errors', color: '#b00020', data: d.points.map((p) => p.errors) },
    ]);
  };
  $('granularity').addEventListener('change', () => loaders.charts().catch((e) => showError('charts', e)));
  $('charts-refresh').addEventListener('click', () => loaders.charts().catch((e) => showError('charts', e)));

  loaders.solvency = async () => {
    const d = await api('GET', '/admin/api/solvency?limit=1440');
    const s = d.samples;
    if (s.length === 0) {
      $('solvency-latest').textContent =
        'No sample yet (one is taken every 5 minutes, and by each solvency check).';
      return;
    }
    const last = s[s.length - 1];
    const ok = last.proofs_msat >= last.user_balances_msat;
    $('solvency-latest').textContent = `Latest (${new Date(last.t).toISOString()}): proofs ${fmt(
      last.proofs_msat,
    )} msats, owed to users ${fmt(last.user_balances_msat)} msats — ${ok ? 'solvent' : 'NOT SOLVENT'}`;
    $('solvency-latest').className = ok ? 'ok' : 'bad';
    plot(
      'chart-solvency',
      'Proofs held vs. user balances (msats)',
      s.map((x) => x.t / 1000),
      [
        { label: 'proofs held', color: '#0a6', data: s.map((x) => x.proofs_msat) },
        { label: 'owed to users', color: '#c60', data: s.map((x) => x.user_balances_msat) },
      ],
    );
    // The margin on its own scale: on the chart above it is the thin gap between the two lines.
    plot(
      'chart-surplus',
      'Operator surplus: proofs held − owed to users (msats)',
      s.map((x) => x.t / 1000),
      [
        {
          label: 'surplus',
          color: '#124',
          fill: 'rgba(18,34,68,.08)',
          data: s.map((x) => x.proofs_msat - x.user_balances_msat),
        },
      ],
    );
  };

  // ---- providers: routing figures, breaker state and call outcomes (GET /admin/api/providers) ----
  loaders.providers = async () => {
    const d = await api('GET', '/admin/api/providers');
    const box = $('providers-table');
    box.textContent = '';
    box.appendChild(el('p', `Routing policy: ${d.routing_policy}`, 'muted'));
    const since = (ms) => (ms === null ? '' : ` until ${when(ms)}`);
    box.appendChild(
      scroll(
        table(
          [
            'name',
            'host',
            'status',
            'breaker',
            'priority',
            'weight',
            'ttfb ms',
            'models',
            'ok',
            'errors',
            '5xx',
            '429',
            'failovers',
          ],
          d.providers.map((p) => [
            p.name,
            p.host,
            p.status,
            `${p.breaker.state}${since(p.breaker.retry_at)}${
              p.breaker.consecutive_failures > 0 ? ` (${p.breaker.consecutive_failures} failed in a row)` : ''
            }`,
            p.priority,
            p.weight,
            p.ttfb_ms === null ? '—' : fmt(p.ttfb_ms),
            p.models === null ? 'all' : p.models.join(', '),
            fmt(p.calls.ok),
            fmt(p.calls.error),
            fmt(p.calls.status_5xx),
            fmt(p.calls.status_429),
            fmt(p.failovers),
          ]),
          'providers-list',
        ),
      ),
    );
  };

  // ---- network: the node's Nostr identity, each relay's last publication, the nodes it pays (GET /admin/api/network) ----
  const iso = (s) => (s === null || s === undefined ? '—' : String(s).replace(/\.\d{3}Z$/, 'Z'));
  const KEY_SOURCES = {
    config: 'NOSTR_NSEC (configured)',
    store: 'made once by this node, kept in the money store',
    memory: 'made for this process only (no store): a new key at every start',
  };

  // A two-column table: one row per [label, value]; a value is text or a ready element.
  function pairs(rows, id) {
    const t = el('table');
    t.id = id;
    for (const [label, value] of rows) {
      const tr = el('tr');
      tr.appendChild(el('th', label));
      const td = el('td');
      if (value instanceof Node) td.appendChild(value);
      else td.textContent = value === null || value === undefined || value === '' ? '—' : String(value);
      tr.appendChild(td);
      t.appendChild(tr);
    }
    return t;
  }

  // One value per line (URLs, mints).
  function lines(values, none) {
    if (values.length === 0) return el('span', none, 'muted');
    const box = el('span', undefined, 'break');
    values.forEach((v, i) => {
      if (i > 0) box.appendChild(document.createElement('br'));
      box.appendChild(document.createTextNode(String(v)));
    });
    return box;
  }

  // The clipboard needs a secure context (https, or loopback): elsewhere the text is selected for Ctrl+C.
  async function copy(source, out) {
    try {
      await navigator.clipboard.writeText(source.textContent);
      out.textContent = ' Copied.';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(source);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      out.textContent = ' Selected: press Ctrl+C to copy.';
    }
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: builds the Network view's DOM in display order
  function renderNetwork(d) {
    const npub = el('span');
    const code = el('code', d.npub, 'break');
    code.id = 'network-npub';
    const button = el('button', 'Copy');
    button.type = 'button';
    button.id = 'network-copy';
    const copied = el('span');
    copied.id = 'network-copy-result';
    copied.setAttribute('role', 'status');
    button.addEventListener('click', () => copy(code, copied));
    npub.append(code, ' ', button, copied);
    const identity = $('network-identity');
    identity.textContent = '';
    identity.appendChild(
      pairs(
        [
          ['npub', npub],
          ['public key (hex)', el('code', d.pubkey, 'break')],
          ['key', KEY_SOURCES[d.key_source] ?? d.key_source],
          ...(d.display_npub === null
            ? []
            : [
                [
                  'shown in /v1/info',
                  el(
                    'span',
                    `${d.display_npub} (NODE_NPUB: a display value only; this node cannot sign with it)`,
                    'break',
                  ),
                ],
              ]),
          ['node id (d tag)', d.node_id],
          ['name', d.name],
          ['about', d.about],
          ['public URLs', lines(d.public_urls, 'none (NODE_PUBLIC_URLS)')],
          ['trusted mints announced', lines(d.mints, 'none (CASHU_MINTS)')],
          ['listing event', el('code', d.listing.id, 'break')],
          ['listing signed at', when(d.listing.created_at * 1000)],
          ['last published', d.last_published_at === null ? 'never' : iso(d.last_published_at)],
        ],
        'network-identity-table',
      ),
    );

    const relays = $('network-relays');
    relays.textContent = '';
    $('network-publish').disabled = d.relays.length === 0;
    if (d.relays.length === 0) {
      relays.appendChild(el('p', 'No relays (NOSTR_RELAYS): the listing is not published.', 'muted'));
    } else {
      const t = table(
        ['relay', 'result', 'last attempt', 'last success', 'error', 'next retry', 'event accepted'],
        [],
        'network-relay-list',
      );
      for (const r of d.relays) {
        const tr = el('tr');
        const result = r.ok === null ? 'not tried yet' : r.ok ? 'ok' : 'failed';
        for (const c of [
          r.relay,
          result,
          iso(r.last_attempt_at),
          iso(r.last_success_at),
          r.last_error ?? '—',
          iso(r.next_attempt_at),
          r.event_id === null ? '—' : r.event_id === d.listing.id ? 'current' : r.event_id,
        ])
          tr.appendChild(el('td', c));
        if (r.ok === false) tr.className = 'bad';
        t.appendChild(tr);
      }
      relays.appendChild(scroll(t));
    }

    const paid = $('network-paid');
    paid.textContent = '';
    if (d.paid_nodes.length === 0) {
      paid.appendChild(
        el('p', 'No provider is paid with eCash (a providers-file entry with "payment": "cashu").', 'muted'),
      );
      return;
    }
    paid.appendChild(
      el(
        'p',
        'What each node cost the operator, from this process since it started (the counters /metrics exposes).',
        'muted',
      ),
    );
    paid.appendChild(
      scroll(
        table(
          [
            'name',
            'node',
            'payment',
            'status',
            'calls answered',
            'calls failed',
            'paid msats',
            'lost msats',
            'losses by reason',
            'change retried',
          ],
          d.paid_nodes.map((n) => [
            n.name,
            n.origin,
            n.payment,
            n.status,
            fmt(n.calls.ok),
            fmt(n.calls.error + n.calls.status_5xx + n.calls.status_429),
            fmt(n.paid_msats),
            fmt(n.lost_msats),
            Object.entries(n.lost_by_reason)
              .map(([reason, msats]) => `${reason}: ${fmt(msats)}`)
              .join(', ') || '—',
            fmt(n.change_retries),
          ]),
          'network-paid-list',
        ),
      ),
    );
  }
  loaders.network = async () => renderNetwork(await api('GET', '/admin/api/network'));
  $('network-publish').addEventListener('click', async () => {
    const out = $('network-publish-result');
    const button = $('network-publish');
    button.disabled = true;
    out.textContent = 'Publishing…';
    out.className = '';
    try {
      const d = await api('POST', '/admin/api/network/publish', { confirm: true });
      renderNetwork(d);
      const ok = d.relays.filter((r) => r.ok === true).length;
      out.textContent = `Sent to ${d.relays.length} relay(s): ${ok} accepted, ${d.relays.length - ok} failed.`;
      out.className = ok === d.relays.length ? 'ok' : 'bad';
    } catch (err) {
      out.textContent = String(err.message);
      out.className = 'bad';
    } finally {
      button.disabled = false;
    }
  });

  // ---- webhooks: the node's latest delivery attempts, filtered, paged by the `before` cursor ----
  let deliveriesQuery;
  let deliveriesLast;
  async function loadDeliveries(more) {
    const box = $('deliveries-result');
    if (!more) {
      const q = new URLSearchParams({ limit: '50' });
      const key = $('deliveries-key').value.trim();
      if (key) q.set('key_id', key);
      if ($('deliveries-failed').checked) q.set('failed', 'true');
      deliveriesQuery = q;
      deliveriesLast = undefined;
    }
    const q = new URLSearchParams(deliveriesQuery);
    if (more && deliveriesLast) q.set('before', deliveriesLast);
    const d = await api('GET', `/admin/api/webhooks/deliveries?${q}`);
    if (!more) box.textContent = '';
    if (!more && d.data.length === 0) {
      box.appendChild(
        el('p', deliveriesQuery.has('failed') ? 'No failed deliveries.' : 'No deliveries yet.'),
      );
    } else {
      let t = $('deliveries-list');
      if (!t) {
        t = table(
          ['when', 'key', 'webhook', 'receiver', 'attempt', 'status', 'error'],
          [],
          'deliveries-list',
        );
        box.appendChild(scroll(t));
      }
      for (const r of d.data) {
        const tr = el('tr');
        for (const c of [
          when(r.at),
          r.key_id,
          r.kind === 'alert' ? `${r.webhook_id} (alert)` : r.webhook_id,
          r.origin,
          r.attempt,
          r.status ?? 'no answer',
          r.error ?? '',
        ])
          tr.appendChild(el('td', c === null || c === undefined ? '—' : c));
        if (r.status === null || r.status < 200 || r.status >= 300) tr.className = 'bad';
        t.appendChild(tr);
      }
    }
    if (d.data.length > 0) deliveriesLast = d.data[d.data.length - 1].id;
    $('deliveries-more').hidden = !d.has_more;
  }
  loaders.webhooks = () => loadDeliveries(false);
  $('deliveries-form').addEventListener('submit', (e) => {
    e.preventDefault();
    loadDeliveries(false).catch((err) => showError('webhooks', err));
  });
  $('deliveries-failed').addEventListener('change', () =>
    loadDeliveries(false).catch((err) => showError('webhooks', err)),
  );
  $('deliveries-more').addEventListener('click', () =>
    loadDeliveries(true).catch((err) => showError('webhooks', err)),
  );

  // ---- keys: one key's figures, children, transactions and audit records; disable, enable, delete ----
  // Each lifecycle action asks first (window.confirm), then reloads the key (a deleted one shows the answer).
  function keyActions(k, a, reload) {
    const p = el('p');
    p.id = 'key-actions';
    const state = el(
      'span',
      k.disabled ? 'Disabled by the operator. ' : 'Enabled. ',
      k.disabled ? 'bad' : 'ok',
    );
    state.id = 'key-state';
    p.appendChild(state);
    const out = el('span');
    out.id = 'key-action-result';
    out.setAttribute('role', 'status');
    const run = async (question, method, path, body) => {
      if (!window.confirm(question)) {
        out.textContent = ' Cancelled.';
        return;
      }
      try {
        const r = await api(method, path, body);
        if (method === 'DELETE') {
          const token = r.refund
            ? `Refund token (${fmt(r.refund.amount)} sats): ${r.refund.cashu_token}`
            : 'No refund.';
          if (r.deleted) {
            out.textContent = ` Deleted. ${token}`;
            out.className = 'ok';
          } else {
            // The token was made and the balance debited, but the delete failed: the key stays disabled.
            out.textContent = ` Not deleted: the key could not be deleted and stays disabled; try again. ${token}`;
            out.className = 'bad';
          }
          return;
        }
        await reload();
      } catch (err) {
        out.textContent = ` ${err.message}`;
        out.className = 'bad';
      }
    };
    const path = `/admin/api/keys/${encodeURIComponent(k.key_id)}`;
    const toggle = el('button', k.disabled ? 'Enable' : 'Disable');
    toggle.type = 'button';
    toggle.id = 'key-toggle';
    toggle.addEventListener('click', () =>
      run(
        k.disabled
          ? `Enable key ${k.key_id} again?`
          : `Disable key ${k.key_id}${k.is_child ? '' : ' and every child of it'}? Calls are refused at once; the balance stays.`,
        'PATCH',
        path,
        { disabled: !k.disabled },
      ),
    );
    p.appendChild(toggle);
    const del = el('button', k.is_child ? 'Delete' : 'Refund and delete');
    del.type = 'button';
    del.id = 'key-delete';
    del.addEventListener('click', () =>
      run(
        k.is_child
          ? `Delete child key ${k.key_id}?`
          : `Pay the balance of ${k.key_id} (${fmt(a.balance)} msats) out as a token and delete the key and its children?`,
        'DELETE',
        k.is_child ? path : `${path}?refund=true`,
      ),
    );
    p.appendChild(del);
    p.appendChild(out);
    return p;
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: builds the Keys view's DOM in display order
  async function showKey(q) {
    const box = $('key-result');
    box.textContent = '';
    try {
      const d = await api(
        'POST',
        '/admin/api/keys/lookup',
        q.startsWith('sk-') ? { api_key: q } : { key_id: q },
      );
      const k = d.key;
      const a = d.account;
      box.appendChild(el('h3', `${k.display_key} (${k.key_id})${k.is_child ? ' — child key' : ''}`));
      box.appendChild(keyActions(k, a, () => showKey(k.key_id)));
      box.appendChild(
        table(
          ['balance', 'reserved', 'available', 'spent', 'deposited', 'requests', 'last used', 'expires'],
          [
            [
              fmt(a.balance),
              fmt(a.reserved),
              fmt(d.available),
              fmt(k.total_spent),
              fmt(a.deposited),
              fmt(k.total_requests),
              when(k.last_used),
              when(k.expires_at),
            ],
          ],
          'key-figures',
        ),
      );
      box.appendChild(
        table(
          ['low balance alert', 'daily spend alert', 'alert receiver', 'webhooks'],
          [
            [
              d.alerts?.low_balance_threshold == null ? '—' : fmt(d.alerts.low_balance_threshold),
              d.alerts?.daily_spend_limit == null ? '—' : fmt(d.alerts.daily_spend_limit),
              d.alerts?.webhook_origin ?? '—',
              d.webhooks.length === 0
                ? '—'
                : d.webhooks
                    .map((w) => `${w.origin} (${w.events.join(', ')})${w.disabled ? ' disabled' : ''}`)
                    .join('; '),
            ],
          ],
          'key-alerts',
        ),
      );
      box.appendChild(
        table(
          ['balance limit', 'reset', 'spent this period', 'allowed models', 'allowed IPs'],
          [
            [
              k.balance_limit === null ? '—' : fmt(k.balance_limit),
              k.balance_limit_reset,
              fmt(k.period_spent),
              k.allowed_models ? k.allowed_models.join(', ') : 'all',
              k.allowed_ips ? k.allowed_ips.join(', ') : 'any',
            ],
          ],
          'key-limits',
        ),
      );
      box.appendChild(el('h3', `Children (${d.children.length})`));
      box.appendChild(
        table(
          ['key', 'spent', 'requests', 'limit', 'last used'],
          d.children.map((c) => [
            c.display_key,
            fmt(c.total_spent),
            fmt(c.total_requests),
            c.balance_limit === null ? '—' : fmt(c.balance_limit),
            when(c.last_used),
          ]),
          'key-children',
        ),
      );
      box.appendChild(el('h3', 'Transactions (msats, newest first)'));
      box.appendChild(
        table(
          ['time', 'type', 'amount', 'balance after', 'model', 'description'],
          d.transactions.map((t) => [
            when(t.timestamp),
            t.type,
            fmt(t.amount),
            fmt(t.balance_after),
            t.model,
            t.description,
          ]),
          'key-transactions',
        ),
      );
      box.appendChild(el('h3', 'Audit records (newest first)'));
      box.appendChild(
        table(
          ['time', 'method', 'endpoint', 'status', 'cost msats', 'request'],
          d.audit.map((r) => [
            when(r.timestamp),
            r.method,
            r.endpoint,
            r.status,
            fmt(r.cost_msats),
            r.request_id,
          ]),
          'key-audit',
        ),
      );
    } catch (err) {
      box.appendChild(el('p', String(err.message), 'bad'));
    }
  }
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    showKey($('key-input').value.trim());
  });

  // ---- audit log: GET /admin/api/audit with the form's filters, paged by the `before` cursor ----
  let auditQuery;
  let auditLast;
  async function loadAudit(more) {
    const box = $('alog-result');
    if (!more) {
      const q = new URLSearchParams({ limit: '50' });
      const key = $('alog-key').value.trim();
      const status = $('alog-status').value.trim();
      const since = $('alog-since').value;
      const until = $('alog-until').value;
      if (key) q.set('key_id', key);
      if (status) q.set('status', status);
      if (since) q.set('since', new Date(since).toISOString());
      if (until) q.set('until', new Date(until).toISOString());
      auditQuery = q;
      box.textContent = '';
    }
    const q = new URLSearchParams(auditQuery);
    if (more && auditLast) q.set('before', auditLast);
    const page = await api('GET', `/admin/api/audit?${q}`);
    let t = $('alog-table');
    if (!t) {
      t = table(
        ['time', 'key', 'method', 'endpoint', 'status', 'cost msats', 'IP', 'user agent', 'request'],
        [],
        'alog-table',
      );
      box.appendChild(t);
    }
    for (const r of page.data) {
      const tr = el('tr');
      for (const c of [
        r.timestamp.replace('.000Z', 'Z'),
        r.api_key_id ?? r.kind,
        r.method,
        r.endpoint,
        r.response_status,
        fmt(r.cost_msats),
        r.ip_address,
        r.user_agent,
        r.request_id,
      ])
        tr.appendChild(el('td', c === null || c === undefined ? '—' : c));
      t.appendChild(tr);
    }
    auditLast = page.next_before ?? auditLast;
    $('alog-more').hidden = !page.has_more;
  }
  loaders['audit-log'] = () => loadAudit(false);
  $('alog-form').addEventListener('submit', (e) => {
    e.preventDefault();
    loadAudit(false).catch((err) => showError('audit-log', err));
  });
  $('alog-more').addEventListener('click', () => loadAudit(true).catch((err) => showError('audit-log', err)));

  // ---- settings form ----
  let settings;
  // The money store as GET /readyz reports it: the Redis form in use and how many of its nodes answer.
  async function storeStatus() {
    const r = await fetch('/readyz');
    const j = await r.json().catch(() => null);
    const checks = j?.checks ?? j?.error?.details?.checks ?? {};
    const redis = j?.redis ?? j?.error?.details?.redis;
    const where = redis
      ? `Redis (${redis.form}): ${redis.answering} of ${redis.nodes} nodes answer`
      : 'embedded SQLite';
    $('store-status').textContent = `Money store: ${where}; store ${checks.store ?? 'unknown'}.`;
  }
  loaders['settings-view'] = async () => {
    storeStatus().catch(() => {
      $('store-status').textContent = 'Money store: /readyz did not answer.';
    });
    settings = await api('GET', '/admin/api/settings');
    const form = $('settings-form');
    form.textContent = '';
    for (const name of settings.runtime_changeable) {
      const v = settings[name];
      const label = el('label');
      label.appendChild(el('span', name));
      const input = document.createElement('input');
      input.name = name;
      input.id = `setting-${name}`;
      if (typeof v === 'boolean') {
        input.type = 'checkbox';
        input.checked = v;
      } else if (typeof v === 'number') {
        input.type = 'number';
        input.step = 'any';
        input.value = String(v);
      } else {
        input.type = 'text';
        input.value = v === null || v === undefined ? '' : String(v);
      }
      label.appendChild(input);
      form.appendChild(label);
    }
    const save = el('button', 'Save changes');
    save.type = 'submit';
    form.appendChild(save);
  };
  $('settings-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const patch = {};
    for (const input of $('settings-form').querySelectorAll('input')) {
      const old = settings[input.name];
      let v;
      if (input.type === 'checkbox') v = input.checked;
      else if (input.type === 'number') v = input.value === '' ? null : Number(input.value);
      else v = input.value;
      if (v !== old && !(v === '' && (old === null || old === undefined))) patch[input.name] = v;
    }
    const out = $('settings-result');
    if (Object.keys(patch).length === 0) {
      out.textContent = 'Nothing changed.';
      return;
    }
    try {
      settings = await api('PATCH', '/admin/api/settings', patch);
      out.textContent = `Saved: ${Object.keys(patch).join(', ')}`;
      out.className = 'ok';
    } catch (err) {
      out.textContent = String(err.message);
      out.className = 'bad';
    }
  });

  // ---- operator actions (each asks first) ----
  async function action(question, path, body) {
    const out = $('action-result');
    if (!window.confirm(question)) {
      out.textContent = 'Cancelled.';
      return;
    }
    out.textContent = 'Running…';
    try {
      const r = await api('POST', path, { confirm: true, ...body });
      out.textContent = JSON.stringify(r, null, 2);
      out.className = 'ok';
    } catch (err) {
      out.textContent = String(err.message);
      out.className = 'bad';
    }
  }
  $('action-recovery').addEventListener('click', () =>
    action('Run the wallet recovery pass now?', '/admin/api/actions/recovery', {}),
  );
  $('action-solvency').addEventListener('click', () =>
    action(
      'Ask every mint which proofs are unspent (solvency check)?',
      '/admin/api/actions/solvency-check',
      {},
    ),
  );
  // The payout's confirmation names the amount and the operator surplus (the server refuses more anyway).
  $('payout-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const out = $('action-result');
    const invoice = $('payout-invoice').value.trim();
    let p;
    try {
      p = await api('POST', '/admin/api/actions/payout/preview', { invoice });
    } catch (err) {
      out.textContent = String(err.message);
      out.className = 'bad';
      return;
    }
    const figures = `${fmt(p.amount_msat)} msats (${fmt(p.amount_msat / 1000)} sats); operator surplus ${fmt(
      p.surplus_msat,
    )} msats = proofs held ${fmt(p.proofs_msat)} − user balances ${fmt(p.user_balances_msat)}`;
    if (!p.allowed) {
      out.textContent = `Refused: the invoice asks for ${figures}.`;
      out.className = 'bad';
      return;
    }
    await action(`Pay ${figures}?\nThe mint's Lightning fee comes on top.`, '/admin/api/actions/payout', {
      invoice,
    });
  });

  window.addEventListener('resize', () => {
    if (current && loaders[current] && (current === 'charts' || current === 'solvency')) loaders[current]();
  });
  show(location.hash.slice(1) || 'overview');
})();
