import { useEffect, useState } from "preact/hooks";
import { ApiError, call, can } from "../api.ts";
import { bytes, cents, date, day } from "../format.ts";
import { ConfirmButton, ErrorNote, Field, Loading, notify, PageHead, TableHead, useAction, useLoad } from "../ui/kit.tsx";

interface Usage {
  usedStorage: number;
  reservedStorage: number;
  allocatedStorage: number;
  objectCount: number;
  egressThisMonth: number;
  apiCallsThisMonth: number;
  month: string;
  plan: string;
}
interface Day {
  date: string;
  usedStorage: number;
  allocatedStorage: number;
  objectCount: number;
  egressBytes: number;
  apiCalls: number;
}
interface Plan {
  key: string;
  name: string;
  includedStorage: number;
  priceCents: number;
  capacityPriceCentsPerGb: number;
}
interface AutoCapacity {
  enabled: boolean;
  incrementGb: number;
  thresholdPct: number;
  maxMonthlySpendCents: number;
}
interface Subscription {
  plan: Plan;
  status: string;
  includedStorage: number;
  extraStorage: number;
  allocatedStorage: number;
  usedStorage: number;
  currentPeriod: { start: string; end: string };
  autoCapacity: AutoCapacity;
  capacitySpentThisMonthCents: number;
  provider: { name: string | null };
  plans: Plan[];
}

export function UsagePage() {
  const [days, setDays] = useState(30);
  const usage = useLoad(() => call<Usage>("usage_get"), []);
  const history = useLoad(() => call<{ from: string; to: string; data: Day[] }>("usage_history", { days }).then((r) => ({ days: windowDays(r.from, r.to), data: r.data })), [days]);
  const u = usage.data;
  return (
    <>
      <PageHead title="Usage & billing" sub={u ? `Month ${u.month} (UTC) · plan ${u.plan}` : undefined} />
      <ErrorNote error={usage.error} />
      {u ? (
        <section class="stats" aria-label="This month">
          <Stat label="Storage used" value={bytes(u.usedStorage)} sub={`of ${bytes(u.allocatedStorage)} allocated`} meter={u.allocatedStorage ? u.usedStorage / u.allocatedStorage : 0} />
          <Stat label="Reserved by uploads" value={bytes(u.reservedStorage)} sub="not yet confirmed" />
          <Stat label="Objects" value={u.objectCount.toLocaleString()} />
          <Stat label="Egress this month" value={bytes(u.egressThisMonth)} />
          <Stat label="API calls this month" value={u.apiCallsThisMonth.toLocaleString()} />
        </section>
      ) : (
        <Loading />
      )}
      <section class="card">
        <div class="section-head">
          <h2>Over time</h2>
          <label class="field inline">
            <span class="field-label">Window</span>
            <select value={days} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}>
              <option value={7}>7 days</option>
              <option value={30}>30 days</option>
              <option value={90}>90 days</option>
              <option value={365}>365 days</option>
            </select>
          </label>
        </div>
        <ErrorNote error={history.error} />
        {history.data ? (
          <div class="charts">
            <Chart title="Storage" days={history.data.days} data={history.data.data} series={[{ key: "usedStorage", label: "used" }, { key: "allocatedStorage", label: "allocated", dashed: true }]} format={bytes} />
            <Chart title="Egress per day" days={history.data.days} data={history.data.data} series={[{ key: "egressBytes", label: "egress" }]} format={bytes} bars />
            <Chart title="API calls per day" days={history.data.days} data={history.data.data} series={[{ key: "apiCalls", label: "calls" }]} format={(n) => n.toLocaleString()} bars />
          </div>
        ) : (
          <Loading />
        )}
      </section>
      {can("billing_subscription_get") && <Billing onChanged={usage.reload} />}
    </>
  );
}

function Stat(props: { label: string; value: string; sub?: string; meter?: number }) {
  return (
    <div class="stat card">
      <div class="stat-label">{props.label}</div>
      <div class="stat-value">{props.value}</div>
      {props.sub && <div class="muted small-text">{props.sub}</div>}
      {props.meter !== undefined && <meter min={0} max={1} low={0.8} high={0.95} optimum={0} value={props.meter} aria-label={`${props.label}: ${Math.round(props.meter * 100)}%`} />}
    </div>
  );
}

interface Series {
  key: keyof Day;
  label: string;
  dashed?: boolean;
}

/** Every day of the window, oldest first (the history lists only days that have a row). */
function windowDays(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < 400; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** A small chart in plain SVG: lines (or bars) over the window's days, scaled to the largest value. */
function Chart(props: { title: string; days: string[]; data: Day[]; series: Series[]; format: (n: number) => string; bars?: boolean }) {
  const W = 480;
  const H = 160;
  const P = { l: 8, r: 8, t: 12, b: 22 };
  const n = Math.max(props.days.length, 1);
  const index = new Map(props.days.map((d, i) => [d, i]));
  const points = props.data.filter((d) => index.has(d.date.slice(0, 10)));
  const max = Math.max(1, ...points.flatMap((d) => props.series.map((s) => Number(d[s.key]))));
  const slot = (W - P.l - P.r) / n;
  const x = (d: Day) => P.l + (index.get(d.date.slice(0, 10))! + 0.5) * slot;
  const y = (v: number) => H - P.b - (v / max) * (H - P.t - P.b);
  const barW = Math.max(1, slot - 2);
  const latest = points[points.length - 1];
  const summary = props.series.map((s) => `${s.label}: latest ${props.format(Number(latest?.[s.key] ?? 0))}, highest ${props.format(Math.max(0, ...points.map((d) => Number(d[s.key]))))}`).join("; ");
  return (
    <figure class="chart">
      <figcaption>
        {props.title} <span class="muted small-text">(max {props.format(max)})</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${props.title}. ${summary}`}>
        <line x1={P.l} x2={W - P.r} y1={H - P.b} y2={H - P.b} class="axis" />
        <line x1={P.l} x2={W - P.r} y1={P.t} y2={P.t} class="grid-line" />
        {props.series.map((s, si) =>
          props.bars ? (
            points.map((d, i) => {
              const v = Number(d[s.key]);
              return <rect key={`${si}-${i}`} class={`bar series-${si}`} x={x(d) - barW / 2} y={y(v)} width={barW} height={H - P.b - y(v)} />;
            })
          ) : (
            <g key={si} class={`series-${si}`}>
              <polyline class={`line series-${si}${s.dashed ? " dashed" : ""}`} points={points.map((d) => `${x(d)},${y(Number(d[s.key]))}`).join(" ")} />
              {points.map((d, i) => (
                <circle key={i} class={`dot series-${si}`} cx={x(d)} cy={y(Number(d[s.key]))} r={2.5} />
              ))}
            </g>
          ),
        )}
        {props.days.length > 0 && (
          <>
            <text x={P.l} y={H - 6} class="tick">
              {day(props.days[0]!)}
            </text>
            <text x={W - P.r} y={H - 6} class="tick end">
              {day(props.days[props.days.length - 1]!)}
            </text>
          </>
        )}
      </svg>
      <div class="legend">
        {props.series.map((s, si) => (
          <span key={s.key} class={`legend-item series-${si}${s.dashed ? " dashed" : ""}`}>
            {s.label}
          </span>
        ))}
      </div>
    </figure>
  );
}

function Billing({ onChanged }: { onChanged: () => void }) {
  const sub = useLoad(() => call<Subscription>("billing_subscription_get"), []);
  // Without a payment provider the invoice list answers 501: the subscription says so first,
  // and asking anyway would log that 501 in the browser's console on every visit.
  const invoices = useLoad(
    async () => (sub.data && sub.data.provider.name !== null ? call<{ data: { id: string; number: string | null; status: string | null; amountDueCents: number; createdAt: string; hostedInvoiceUrl: string | null }[] }>("billing_invoices_list", { limit: 20 }) : undefined),
    [sub.data?.provider.name ?? null, sub.data !== undefined],
  );
  const [gb, setGb] = useState(10);
  const [auto, setAuto] = useState<AutoCapacity | null>(null);
  useEffect(() => {
    if (sub.data) setAuto(sub.data.autoCapacity);
  }, [sub.data]);
  const [saveAuto, savingAuto] = useAction(async () => {
    await call("billing_capacity_auto_set", { ...auto! });
    notify("Auto-capacity saved");
    sub.reload();
  });
  const [portal, opening] = useAction(async () => {
    const r = await call<{ url: string }>("billing_portal_get", { returnUrl: window.location.href });
    window.location.assign(r.url);
  });
  const s = sub.data;
  if (!s) return sub.error ? <ErrorNote error={sub.error} /> : <Loading />;
  const notConfigured = s.provider.name === null || (invoices.error instanceof ApiError && invoices.error.status === 501);
  return (
    <>
      <section class="card">
        <h2>Plan</h2>
        <dl class="facts">
          <dt>Plan</dt>
          <dd>
            {s.plan.name} ({cents(s.plan.priceCents)} a month) · {s.status}
          </dd>
          <dt>Included</dt>
          <dd>{bytes(s.includedStorage)}</dd>
          <dt>Extra capacity</dt>
          <dd>{bytes(s.extraStorage)}</dd>
          <dt>Allocated</dt>
          <dd>{bytes(s.allocatedStorage)}</dd>
          <dt>Period</dt>
          <dd>
            {date(s.currentPeriod.start)} – {date(s.currentPeriod.end)}
          </dd>
          <dt>Capacity bought this month</dt>
          <dd>{cents(s.capacitySpentThisMonthCents)}</dd>
        </dl>
        {can("billing_downgrade") && s.plans.filter((p) => p.priceCents <= s.plan.priceCents && p.key !== s.plan.key).length > 0 && (
          <div class="actions left">
            {s.plans
              .filter((p) => p.priceCents <= s.plan.priceCents && p.key !== s.plan.key)
              .map((p) => (
                <ConfirmButton
                  key={p.key}
                  class="small"
                  label={`Move to ${p.name}`}
                  question={`Move to the ${p.name} plan?`}
                  detail={<p>{bytes(p.includedStorage)} included, {cents(p.priceCents)} a month. Refused while used storage is above what it would allocate.</p>}
                  onConfirm={async () => {
                    await call("billing_downgrade", { tierKey: p.key });
                    sub.reload();
                    onChanged();
                  }}
                />
              ))}
          </div>
        )}
      </section>
      <section class="card">
        <h2>Capacity</h2>
        {can("billing_capacity_add") && (
          <form
            class="inline-form"
            aria-label="Add capacity"
            onSubmit={async (e) => {
              e.preventDefault();
              try {
                await call("billing_capacity_add", { gb });
                notify(`${gb} GiB added`);
                sub.reload();
                onChanged();
              } catch (err) {
                notify(String((err as Error).message), "error");
              }
            }}
          >
            <Field label="Add capacity (GiB)" hint={`${cents(s.plan.capacityPriceCentsPerGb)} per GiB`}>
              <input type="number" min={1} max={10240} value={gb} onInput={(e) => setGb(Number((e.target as HTMLInputElement).value))} />
            </Field>
            <button type="submit">Buy {gb} GiB for {cents(gb * s.plan.capacityPriceCentsPerGb)}</button>
          </form>
        )}
        {auto && can("billing_capacity_auto_set") && (
          <form
            class="inline-form"
            aria-label="Auto-capacity"
            onSubmit={(e) => {
              e.preventDefault();
              void saveAuto();
            }}
          >
            <label class="check">
              <input type="checkbox" checked={auto.enabled} onChange={(e) => setAuto({ ...auto, enabled: (e.target as HTMLInputElement).checked })} /> Buy capacity automatically
            </label>
            <Field label="When used reaches (%)">
              <input type="number" min={1} max={100} value={auto.thresholdPct} onInput={(e) => setAuto({ ...auto, thresholdPct: Number((e.target as HTMLInputElement).value) })} />
            </Field>
            <Field label="Buy (GiB)">
              <input type="number" min={1} max={10240} value={auto.incrementGb} onInput={(e) => setAuto({ ...auto, incrementGb: Number((e.target as HTMLInputElement).value) })} />
            </Field>
            <Field label="Monthly limit (cents)">
              <input type="number" min={0} value={auto.maxMonthlySpendCents} onInput={(e) => setAuto({ ...auto, maxMonthlySpendCents: Number((e.target as HTMLInputElement).value) })} />
            </Field>
            <button type="submit" disabled={savingAuto}>
              Save
            </button>
          </form>
        )}
      </section>
      <section class="card">
        <h2>Invoices</h2>
        {notConfigured ? (
          <p class="muted">No payment provider is configured on this server (STRIPE_SECRET_KEY), so there are no invoices or customer portal.</p>
        ) : invoices.error ? (
          <ErrorNote error={invoices.error} />
        ) : !invoices.data ? (
          <Loading />
        ) : invoices.data.data.length === 0 ? (
          <p class="muted">No invoices yet.</p>
        ) : (
          <table class="table">
            <TableHead columns={["Invoice", "Date", "Amount", "Status"]} />
            <tbody>
              {invoices.data.data.map((i) => (
                <tr key={i.id}>
                  <td>{i.hostedInvoiceUrl ? <a href={i.hostedInvoiceUrl} rel="noopener noreferrer" target="_blank">{i.number ?? i.id}</a> : i.number ?? i.id}</td>
                  <td data-label="Date">{date(i.createdAt)}</td>
                  <td data-label="Amount">{cents(i.amountDueCents)}</td>
                  <td data-label="Status">{i.status ?? "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {!notConfigured && can("billing_portal_get") && (
          <button type="button" disabled={opening} onClick={() => portal()}>
            Open the billing portal
          </button>
        )}
      </section>
    </>
  );
}
